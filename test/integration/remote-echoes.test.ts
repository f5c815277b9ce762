import { createTransportHealth } from '../../src/health';
import { buildOutgoingMail } from '../../src/mail';
import { createNotifier, FAILURE_CATALOGUE, type OAuth2Config, type SmtpConfig } from '../../src/notify';
import { createAccessTokenFetcher } from '../../src/notify/fetch-access-token';
import { createSilentLogger } from '../../src/shared';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';
import { startHttpListener as listen } from '../helpers/http-listener';
import { startSmtpPeer } from '../helpers/smtp-peer';

/** Servers that echo what they were sent: the secret never comes back out of the relay, in any form. */

const NETBOX_TOKEN = 'nbtok-T0pC5sA2yOg7d8e9f0a1b2c3d4e5f6a7b8c9';
const PASSWORD = 'smtp-pass-S9oB4rZ1xNh6/+=';
const CLIENT_SECRET = 'cs~Q8x.Zr_1-abcDEF+/ 9';

function forms(value: string, user = 'relay'): string[] {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [value, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2), b64(value), b64(`\0${user}\0${value}`)];
}

function expectNoEcho(text: string, secret: string): void {
  for (const form of forms(secret)) expect(text).not.toContain(form);
}

describe('secrets echoed by a remote server', () => {
  it("NetBox's 403 detail echoing the Authorization header: masked in the mail, the stored delivery and the log", async () => {
    const netbox = await listen((req, res) => {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ detail: `Invalid token: ${req.headers.authorization} (${encodeURIComponent(NETBOX_TOKEN)})` }));
    });
    const smtp = await startSmtpPeer();
    const relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', NETBOX_URL: netbox.url, NETBOX_TOKEN });
    try {
      const body = buildBody({
        version: '4.6',
        data: buildReportData({ id: 91, total_passed: 1, total_count: 2, high_passed: 1, high_count: 2 }),
      });
      const res = await postWebhook(relay.webhookUrl, body);
      expect(res.status).toBe(202);
      const [mail] = await smtp.waitFor(1);
      await waitUntil(() => relay.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
      const text = String(mail.parsed.text);
      expect(text).toContain('NetBox refused the relay');
      expect(text).toContain('Invalid token: Token [REDACTED]');
      const stored = await relay.relay.store.listSentMessages(res.json.id as number);
      const everything = [text, String(mail.parsed.html), ...stored.map((m) => m.raw.toString('utf8')), ...relay.logs].join('\n');
      expectNoEcho(everything, NETBOX_TOKEN);
    } finally {
      await relay.stop();
      await smtp.close();
      await netbox.close();
    }
  });

  it('an SMTP 535 echoing the password and its AUTH PLAIN base64: masked in the send error, the check and /readyz status', async () => {
    const smtp = await startSmtpPeer({
      server: {
        authOptional: false,
        allowInsecureAuth: true,
        onAuth: (auth, _session, callback) => {
          const plain = Buffer.from(`\0${auth.username}\0${auth.password}`).toString('base64');
          callback(new Error(`bad login ${auth.password} ${plain} ${encodeURIComponent(auth.password ?? '')}`));
        },
      },
    });
    const config: SmtpConfig = {
      url: smtp.url,
      user: 'relay',
      password: PASSWORD,
      caFile: undefined,
      // The peer offers no STARTTLS: the opt-out lets the login reach it, so that its echo can be checked.
      requireTls: false,
      poolSize: 1,
      connectionTimeoutMs: 5_000,
      greetingTimeoutMs: 5_000,
      socketTimeoutMs: 5_000,
      oauth2: undefined,
    };
    const notifier = createNotifier({ name: 'smtp', settings: config }, { readFile: () => Buffer.alloc(0) });
    try {
      const mail = await buildOutgoingMail({
        from: 'r@example.com',
        to: ['a@example.com'],
        cc: [],
        bcc: [],
        subject: 's',
        text: 'x',
        html: '<p>x</p>',
        attachments: [],
        headers: {},
        messageId: '<echo@example.com>',
        date: new Date(0),
      });
      const sent = await notifier.send(mail);
      if (!('failure' in sent)) throw new Error('the login should have been refused');
      const verified = await notifier.verify().then(
        () => new Error('the login should have been refused'),
        (e: unknown) => e as Error,
      );
      const health = createTransportHealth({
        notifier,
        clock: { now: () => 0 },
        logger: createSilentLogger(),
        intervalMs: 60_000,
        failures: FAILURE_CATALOGUE,
      });
      const status = await health.check();
      const texts = [sent.failure.message, `${verified.message} ${String((verified as { response?: string }).response)}`];
      expect(texts[0]).toContain('bad login [REDACTED] [REDACTED] [REDACTED]');
      expectNoEcho([...texts, JSON.stringify(status)].join('\n'), PASSWORD);
    } finally {
      await notifier.close();
      await smtp.close();
    }
  });

  it("a token endpoint's error_description echoing the client secret (plain, form-encoded, base64): masked in the error", async () => {
    const endpoint = await listen((req, res) => {
      let form = '';
      req.on('data', (c: Buffer) => (form += c.toString()));
      req.on('end', () => {
        const secret = new URLSearchParams(form).get('client_secret') ?? '';
        res.writeHead(401, { 'Content-Type': 'application/json' });
        const echo = `AADSTS7000215: Invalid client secret ${secret} in ${form} ${Buffer.from(secret).toString('base64')}`;
        res.end(JSON.stringify({ error: 'invalid_client', error_description: echo }));
      });
    });
    try {
      const config: OAuth2Config = {
        provider: 'microsoft',
        tokenUrl: `${endpoint.url}/token`,
        scope: 'https://outlook.office365.com/.default',
        clientId: 'client',
        clientSecret: CLIENT_SECRET,
        timeoutMs: 2_000,
      };
      const error = (await createAccessTokenFetcher(config, { clock: { now: () => 0 } })().catch((e: unknown) => e)) as Error;
      expect(error.message).toContain('AADSTS7000215: Invalid client secret [REDACTED] in ');
      expectNoEcho(error.message, CLIENT_SECRET);
    } finally {
      await endpoint.close();
    }
  });
});

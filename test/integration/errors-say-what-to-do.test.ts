import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { runCliCaptured } from '../helpers/run-cli';
import { makeTempDir, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates, type TestCertificates } from '../helpers/test-certificates';
import { REFUSED_PORT } from '../helpers/http-listener';

/**
 * docs/errors.md's tables, one test per row: each error is caused for real
 * (a closed port, a listener that never greets, a name that cannot resolve, a plain SMTP server
 * behind smtps://, a certificate from an unknown CA, a refused login, a wrong value) and the words
 * the user reads are asserted: what happened, and which variable to change. The rows "port in use"
 * and "data directory locked" are in one-relay-per-data-dir.test.ts.
 */
describe('every error a user can cause says what happened and what to do', () => {
  let dir: string;
  let certs: TestCertificates;
  const peers: SmtpPeer[] = [];
  const servers: net.Server[] = [];

  beforeAll(() => {
    dir = makeTempDir('relay-errors-');
    certs = createTestCertificates(dir);
  });
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ({ MAIL_TO: 'oncall@example.com', DATA_DIR: path.join(dir, 'data'), DOTENV_CONFIG_PATH: path.join(dir, 'none.env') });
  const verifySmtp = (env: Record<string, string>) => runCliCaptured(['verify-smtp'], { ...base(), ...env });

  async function listen(server: net.Server): Promise<number> {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return (server.address() as net.AddressInfo).port;
  }

  async function peer(options: Parameters<typeof startSmtpPeer>[0]): Promise<SmtpPeer> {
    const p = await startSmtpPeer(options);
    peers.push(p);
    return p;
  }

  describe('the mail server (verify-smtp)', () => {
    it('connection refused: names the address and SMTP_URL', async () => {
      const port = REFUSED_PORT;
      const r = await verifySmtp({ SMTP_URL: `smtp://127.0.0.1:${port}` });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(`Nothing accepts connections at 127.0.0.1:${port} (connection refused)`);
      expect(r.stderr).toContain('Check the host and port in SMTP_URL');
    });

    it('timed out: a server that never greets; says SMTP_URL and how long the relay waits', async () => {
      const port = await listen(net.createServer(() => undefined));
      const r = await verifySmtp({ SMTP_URL: `smtp://127.0.0.1:${port}` });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(`127.0.0.1:${port} did not answer in time`);
      expect(r.stderr).toContain('Check SMTP_URL; the relay waits 10 s to connect and 10 s for the greeting');
      expect(r.stderr).toContain('use smtps://');
    });

    it('DNS: a host name that does not resolve', async () => {
      const r = await verifySmtp({ SMTP_URL: 'smtp://no-such-host.invalid:25' });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain('The host name of no-such-host.invalid:25 does not resolve (DNS)');
      expect(r.stderr).toContain('host in SMTP_URL');
    });

    it('TLS version mismatch: smtps:// against a server that starts in plain text (STARTTLS)', async () => {
      const plain = await peer({});
      const r = await verifySmtp({ SMTP_URL: plain.url.replace('smtp://', 'smtps://') });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain('does not speak TLS from the first byte');
      expect(r.stderr).toContain('Use smtp:// with this port');
      expect(r.stderr).not.toMatch(/openssl|ssl3_get_record/);
    });

    it('untrusted certificate: names SMTP_CA_FILE', async () => {
      const tls = await peer({ server: { secure: true, key: certs.key, cert: certs.cert } });
      const r = await verifySmtp({ SMTP_URL: tls.url });
      expect(r.code).toBe(69);
      // ETLS, the code a delivery stores for it, not the ESOCKET nodemailer reports.
      expect(r.stderr).toContain(`(ETLS): The certificate of 127.0.0.1:${tls.port} is not trusted`);
      expect(r.stderr).toContain('SMTP_CA_FILE');
      // The same server passes once its CA is given: the advice is the fix.
      const fixed = await verifySmtp({ SMTP_URL: tls.url, SMTP_CA_FILE: certs.caFile });
      expect(fixed.code).toBe(0);
    });

    it('expired certificate, from a trusted CA: ETLS with the same advice, not a network fault', async () => {
      const expired = createTestCertificates(makeTempDir('relay-errors-expired-'), { expired: true });
      const tls = await peer({ server: { secure: true, key: expired.key, cert: expired.cert } });
      const r = await verifySmtp({ SMTP_URL: tls.url, SMTP_CA_FILE: expired.caFile });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(`(ETLS): The certificate of 127.0.0.1:${tls.port} is not trusted (certificate has expired)`);
      expect(r.stderr).not.toContain('ESOCKET');
    });

    it('wrong login: names SMTP_USER and SMTP_PASSWORD', async () => {
      const auth = await peer({
        server: {
          disabledCommands: [],
          key: certs.key,
          cert: certs.cert,
          authOptional: false,
          onAuth: (_auth, _session, callback) => callback(new Error('Invalid username or password')),
        },
      });
      const r = await verifySmtp({ SMTP_URL: auth.url, SMTP_CA_FILE: certs.caFile, SMTP_USER: 'relay', SMTP_PASSWORD: 'wrong' });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain('refused the login');
      expect(r.stderr).toContain('Check SMTP_USER and SMTP_PASSWORD');
    });

    it('a login to a server that offers no STARTTLS: nothing in clear, names SMTP_REQUIRE_TLS', async () => {
      const plain = await peer({
        server: { authOptional: false, allowInsecureAuth: true, onAuth: (_a, _s, callback) => callback(null, {}) },
      });
      const r = await verifySmtp({ SMTP_URL: plain.url, SMTP_USER: 'relay', SMTP_PASSWORD: 'secret' });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(`(SMTP_TLS_REQUIRED 500): 127.0.0.1:${plain.port} offers no STARTTLS, and the relay logs in`);
      expect(r.stderr).toContain('Enable STARTTLS on the server, or use its implicit-TLS port (usually 465) with smtps://');
      expect(r.stderr).toContain('set SMTP_REQUIRE_TLS=false');
    });

    it('send-test says the same as verify-smtp', async () => {
      const port = REFUSED_PORT;
      const r = await runCliCaptured(['send-test'], { ...base(), SMTP_URL: `smtp://127.0.0.1:${port}` });
      expect(r.code).toBe(69);
      expect(r.stderr).toContain('the test mail was not sent (ESOCKET): Nothing accepts connections at');
    });
  });

  describe('the running relay: dashboard banner, /readyz and the log', () => {
    let relay: TestRelay | undefined;
    afterEach(async () => {
      await relay?.stop();
      relay = undefined;
    });

    it('a refused connection reads the same on the dashboard, in /readyz and in the log', async () => {
      const port = REFUSED_PORT;
      const ADMIN_TOKEN = 'an-admin-token-of-some-length';
      relay = await startTestRelay({
        ...base(),
        DATA_DIR: makeTempDir('relay-errors-data-'),
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        ADMIN_TOKEN,
      });
      const words = `Nothing accepts connections at 127.0.0.1:${port} (connection refused)`;
      const readiness = await waitUntil(async () => {
        const body = (await (await fetch(`${relay!.url}/readyz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as {
          checks: { smtp: { ok: boolean; message?: string } };
        };
        return body.checks.smtp.ok ? undefined : body.checks.smtp;
      });
      expect(readiness.message).toContain(words);
      const login = await fetch(`${relay.url}/ui/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `token=${ADMIN_TOKEN}`,
        redirect: 'manual',
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0];
      const page = await (await fetch(`${relay.url}/ui`, { headers: { Cookie: cookie } })).text();
      expect(page).toContain(words);
      expect(relay.logs.join('\n')).toContain(words);
    });
  });

  describe('configuration values: the variable, the allowed values, never zod’s sentence', () => {
    const checkConfig = (env: Record<string, string>) => runCliCaptured(['check-config'], { ...base(), ...env });

    it.each([
      ['a number that is not one', { PORT: 'eighty' }, 'PORT: must be a whole number from 0 to 65535 (got "eighty")'],
      ['a number out of range', { PORT: '70000' }, 'PORT: must be a whole number from 0 to 65535 (got "70000")'],
      [
        'a word outside the list',
        { LOG_LEVEL: 'loud' },
        'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      ],
      ['a yes/no value', { WEBHOOK_ALLOW_UNSIGNED: 'maybe' }, 'WEBHOOK_ALLOW_UNSIGNED: must be true or false (or 1, yes, on, 0, no, off)'],
    ])('%s', async (_label, env, words) => {
      const r = await checkConfig(env);
      expect(r.code).toBe(78);
      expect(r.stderr).toContain(words);
      expect(r.stderr).not.toMatch(/Invalid input|expected number|Too big|received NaN/);
    });

    it('a variable another one needs', async () => {
      const r = await checkConfig({ SMTP_URL: 'smtp://mail.example.com:587', MAIL_TO: '' });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('MAIL_TO: is required when SMTP_URL is set and there is no ROUTES_FILE');
    });

    it('a route without recipients in ROUTES_FILE', async () => {
      const file = path.join(dir, 'routes.yaml');
      fs.writeFileSync(file, 'routes:\n  - name: oncall\n    notify: sometimes\n');
      const r = await checkConfig({ ROUTES_FILE: file });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('route 1 (oncall) to: is required');
      expect(r.stderr).toContain('route 1 (oncall) notify: must be one of always, on-failure, on-change');
      expect(r.stderr).not.toMatch(/Invalid input|nonoptional|Invalid option/);
    });
  });
});

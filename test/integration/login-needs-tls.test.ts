import { runCliCaptured } from '../helpers/run-cli';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'login-needs-tls-webhook-secret';
const ADMIN_TOKEN = 'admin-token-for-login-needs-tls';
const PASSWORD = 'relay-password-Qx81';

/** What a server without STARTTLS saw: every AUTH command (smtp-server's onAuth) and every DATA (onData, counted by the peer). */
interface PlainServer {
  peer: SmtpPeer;
  logins: string[];
}

/** A real smtp-server that offers no STARTTLS and takes any login in clear (a misconfigured server, or a path that stripped it). */
async function startPlainServer(wantsLogin: boolean): Promise<PlainServer> {
  const logins: string[] = [];
  const peer = await startSmtpPeer({
    server: {
      authOptional: !wantsLogin,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        logins.push(`${auth.username}:${auth.password}`);
        callback(null, { user: auth.username });
      },
    },
  });
  return { peer, logins };
}

async function postReports(relay: TestRelay, ids: number[]): Promise<void> {
  for (const id of ids) {
    const body = buildBody({ data: buildReportData({ id }) });
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
  }
}

function reportIds(peer: SmtpPeer): number[] {
  return peer.received.map((m) => Number(m.parsed.headers.get('x-compliance-report-id')));
}

/**
 * Item: no credential and no mail in clear by accident. With a login, an smtp:// server must offer STARTTLS:
 * one that does not gets neither the AUTH command nor any DATA (asserted at the server), the queue is held (nothing
 * sent, nothing given up) and every place an operator looks says what to do. SMTP_REQUIRE_TLS=false is the one
 * opt-out; without a login STARTTLS stays opportunistic.
 */
describe('a login goes only over TLS', () => {
  let server: PlainServer | undefined;
  let relay: TestRelay | undefined;
  const env = (s: PlainServer, extra: Record<string, string> = {}) => ({
    SMTP_URL: s.peer.url,
    SMTP_USER: 'relay',
    SMTP_PASSWORD: PASSWORD,
    SMTP_POOL_SIZE: '1',
    MAIL_TO: 'netops@example.com',
    WEBHOOK_SECRET: SECRET,
    ADMIN_TOKEN,
    ...extra,
  });

  afterEach(async () => {
    await relay?.stop();
    await server?.peer.close();
    relay = server = undefined;
  });

  it('a server without STARTTLS: no AUTH, no DATA, the queue held and said so; the opt-out then sends every report once, in order', async () => {
    server = await startPlainServer(true);
    const dataDir = makeTempDir('relay-login-tls-');
    relay = await startTestRelay(env(server), { dataDir });
    await postReports(relay, [301, 302, 303]);

    await waitUntil(() => relay!.relay.worker.breaker.held || undefined, 10_000, 'the queue to be held');
    await waitUntil(() => relay!.workerOutcomes.find((o) => o.settled?.state === 'retrying'), 10_000, 'the first attempt');
    const states = (await relay.relay.store.readQueue()).counts;
    expect((states.queued ?? 0) + (states.retrying ?? 0)).toBe(3);
    expect(relay.workerOutcomes.some((o) => o.settled?.state === 'retrying' && o.failure?.code === 'SMTP_TLS_REQUIRED')).toBe(true);
    expect(server.logins).toEqual([]);
    expect(server.peer.attempts).toBe(0);
    expect([states.sent ?? 0, states.dead ?? 0]).toEqual([0, 0]);

    // /readyz: held, and why (the code for everyone, what to do for a token holder).
    const open = (await (await fetch(`${relay.url}/readyz`)).json()) as { smtp: { state: string; heldFor: string } };
    expect(open.smtp).toMatchObject({ state: 'held', heldFor: 'SMTP_TLS_REQUIRED' });
    const detailed = (await (await fetch(`${relay.url}/readyz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as {
      checks: { smtp: { code: string; message: string } };
    };
    expect(detailed.checks.smtp.code).toBe('SMTP_TLS_REQUIRED');
    expect(detailed.checks.smtp.message).toContain('offers no STARTTLS, and the relay logs in');
    expect(detailed.checks.smtp.message).toContain('SMTP_REQUIRE_TLS=false');
    // The log says what to do, and never the password.
    const log = relay.logs.join('\n');
    expect(log).toContain('Enable STARTTLS on the server');
    expect(log).toContain('CONFIGURATION PROBLEM');
    expect(log).not.toContain(PASSWORD);
    // The dashboard: the held banner, and the mail banner with what to do.
    const login = await fetch(`${relay.url}/ui/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ADMIN_TOKEN}`,
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const page = await (await fetch(`${relay.url}/ui`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain('data-pause-state="held" data-mail-code="SMTP_TLS_REQUIRED"');
    expect(page).toContain('Sending is held for an operator');
    expect(page).toContain('offers no STARTTLS');

    // verify-smtp and send-test say why, and send nothing either.
    const verify = await runCliCaptured(['verify-smtp'], { ...env(server), DATA_DIR: makeTempDir('relay-login-tls-cli-') });
    expect(verify.code).toBe(69);
    expect(verify.stderr).toContain('offers no STARTTLS, and the relay logs in: it sent neither the login nor any mail in clear');
    const sendTest = await runCliCaptured(['send-test'], { ...env(server), DATA_DIR: makeTempDir('relay-login-tls-cli-') });
    expect(sendTest.code).toBe(69);
    expect(sendTest.stderr).toContain('SMTP_TLS_REQUIRED');
    expect(sendTest.stderr).toContain('Enable STARTTLS on the server');
    expect(server.logins).toEqual([]);
    expect(server.peer.attempts).toBe(0);

    // The operator trusts this path: the opt-out, a restart, and the held reports go at once, each once, in order.
    await relay.stop();
    relay = await startTestRelay(env(server, { SMTP_REQUIRE_TLS: 'false' }), { dataDir });
    await server.peer.waitFor(3, 20_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all three sent');
    expect(reportIds(server.peer)).toEqual([301, 302, 303]);
    expect(server.logins[0]).toBe(`relay:${PASSWORD}`);
    // The opt-out is said at every start: the login now travels in clear.
    expect(relay.logs.join('')).toContain('SMTP_REQUIRE_TLS=false: a login to a server that offers no STARTTLS sends the password');
  }, 60_000);

  it('without a login STARTTLS stays opportunistic: the same server gets the mail', async () => {
    server = await startPlainServer(false);
    relay = await startTestRelay({ ...env(server), SMTP_USER: undefined, SMTP_PASSWORD: undefined });
    await postReports(relay, [401]);
    await server.peer.waitFor(1, 20_000);
    expect(reportIds(server.peer)).toEqual([401]);
    expect(server.logins).toEqual([]);
    expect(relay.relay.worker.breaker.held).toBe(false);
  }, 30_000);
});

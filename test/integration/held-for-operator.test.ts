import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates } from '../helpers/test-certificates';

const SECRET = 'held-for-operator-webhook-secret';
const ADMIN_TOKEN = 'admin-token-for-held-for-operator';
const METRICS_TOKEN = 'metrics-token-for-held-for-operator';
const OLD_PASSWORD = 'old-password-Rk2';
const NEW_PASSWORD = 'new-password-Wm7';

/** A real smtp-server on STARTTLS that takes only `password.current`, answering 535 to any other (a password changed on the server). */
async function startMailServer(caDir: string, password: { current: string }, logins: string[]) {
  const certs = createTestCertificates(caDir);
  const peer = await startSmtpPeer({
    server: {
      disabledCommands: [],
      key: certs.key,
      cert: certs.cert,
      authOptional: false,
      onAuth(auth, _session, callback) {
        logins.push(auth.password ?? '');
        if (auth.password === password.current) return callback(null, { user: auth.username });
        callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
      },
    },
  });
  return { peer, caFile: certs.caFile };
}

function reportIds(peer: SmtpPeer): number[] {
  return peer.received.map((m) => Number(m.parsed.headers.get('x-compliance-report-id')));
}

/**
 * Item: a configuration problem never gives a report up. A password changed on the mail server before the
 * relay's: the reports posted meanwhile wait (none dead, however long), the relay says so everywhere with the fix,
 * and tries the login again only rarely (a directory's lockout policy); once fixed, a restart or "Try now" mails
 * every held report once, in order, without `retry`.
 */
describe('a refused login holds the queue for the operator', () => {
  let server: Awaited<ReturnType<typeof startMailServer>> | undefined;
  let relay: TestRelay | undefined;
  const password = { current: NEW_PASSWORD };
  let logins: string[] = [];
  const env = (smtpPassword: string) => ({
    SMTP_URL: server!.peer.url,
    SMTP_CA_FILE: server!.caFile,
    SMTP_USER: 'relay',
    SMTP_PASSWORD: smtpPassword,
    // One connection, so that the held queue's order is the order the server sees.
    SMTP_POOL_SIZE: '1',
    MAIL_TO: 'netops@example.com',
    WEBHOOK_SECRET: SECRET,
    ADMIN_TOKEN,
    METRICS_TOKEN,
  });

  beforeEach(async () => {
    logins = [];
    password.current = NEW_PASSWORD;
    server = await startMailServer(makeTempDir('relay-held-ca-'), password, logins);
  });
  afterEach(async () => {
    await relay?.stop();
    await server?.peer.close();
    relay = server = undefined;
  });

  /** A relay with the old password (the shipped retry timings: no tuning), three reports posted, held. */
  async function holdThreeReports(dataDir: string): Promise<void> {
    relay = await startTestRelay(env(OLD_PASSWORD), { dataDir });
    for (const id of [501, 502, 503]) {
      const body = buildBody({ data: buildReportData({ id }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    }
    await waitUntil(
      () => relay!.workerOutcomes.find((o) => o.settled?.state === 'retrying' && o.failure?.code === 'EAUTH'),
      10_000,
      'a refused login',
    );
    expect(relay.relay.worker.breaker).toMatchObject({ state: 'open', held: true, lastError: { code: 'EAUTH' } });
  }

  it('535: none dead, said so in /readyz, the metric and the log; logins stay bounded; a restart with the fix mails each once, in order', async () => {
    const dataDir = makeTempDir('relay-held-');
    await holdThreeReports(dataDir);
    const states = (await relay!.relay.store.readQueue()).counts;
    expect([states.sent ?? 0, states.dead ?? 0, (states.queued ?? 0) + (states.retrying ?? 0)]).toEqual([0, 0, 3]);
    expect(relay!.workerOutcomes.some((o) => o.settled?.state === 'dead')).toBe(false);

    const open = (await (await fetch(`${relay!.url}/readyz`)).json()) as { smtp: Record<string, unknown> };
    expect(open.smtp).toMatchObject({ ok: false, state: 'held', heldFor: 'EAUTH' });
    const metrics = await (await fetch(`${relay!.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toContain('compliance_relay_smtp_held{code="EAUTH"} 1');
    expect(metrics).toContain('compliance_relay_smtp_paused 1');
    expect(relay!.logs.join('\n')).toContain('Check SMTP_USER and SMTP_PASSWORD');

    // Held for minutes, not milliseconds: the queue waits without trying the login again meanwhile. The first
    // login check at start and the first send are all the server sees.
    const seen = logins.length;
    expect(seen).toBeLessThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(logins.length).toBe(seen);
    expect(relay!.relay.worker.breaker.openUntil - Date.now()).toBeGreaterThan(4 * 60_000);

    // The relay gets the new password and restarts: the held reports go at once, each once, oldest first.
    await relay!.stop();
    relay = await startTestRelay(env(NEW_PASSWORD), { dataDir });
    await server!.peer.waitFor(3, 30_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all three sent');
    expect(reportIds(server!.peer)).toEqual([501, 502, 503]);
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
  }, 60_000);

  it('the dashboard says held; the password put back on the server, then a resume: each held report once, in order, no restart', async () => {
    await holdThreeReports(makeTempDir('relay-held-resume-'));
    password.current = OLD_PASSWORD;
    const login = await fetch(`${relay!.url}/ui/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ADMIN_TOKEN}`,
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const page = await (await fetch(`${relay!.url}/ui`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain('data-pause-state="held" data-mail-code="EAUTH"');
    expect(page).toContain('Sending is held for an operator');
    // The dashboard's "Try now", from the command line: the admin API's resume.
    const resumed = await fetch(`${relay!.url}/api/deliveries/resume`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await resumed.json()).toEqual({ smtp: 'probing-now' });

    await server!.peer.waitFor(3, 30_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all three sent');
    expect(reportIds(server!.peer)).toEqual([501, 502, 503]);
    expect(relay!.relay.worker.breaker).toMatchObject({ state: 'closed', held: false });
  }, 60_000);
});

/**
 * A template that fails on one report holds that delivery alone, on its backoff (here the longest the first retry
 * can draw: a minute). The operator fixes the template and restarts the relay, which loads templates at start: the
 * report is mailed at once, not when its backoff ends.
 */
describe('a template that fails to render holds its delivery until the fix', () => {
  let peer: SmtpPeer | undefined;
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    await peer?.close();
    relay = peer = undefined;
  });

  it('a restart with the fixed template mails the held report at once', async () => {
    const dir = makeTempDir('relay-held-template-');
    const write = (html: string) => {
      fs.mkdirSync(path.join(dir, 'templates', 'report'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'templates', 'report', 'subject.hbs'), '{{defaultSubject}}');
      fs.writeFileSync(path.join(dir, 'templates', 'report', 'text.hbs'), '{{defaultSubject}}');
      fs.writeFileSync(path.join(dir, 'templates', 'report', 'html.hbs'), html);
    };
    // Renders the sample the start checks with; calls a helper that does not exist for report 4242 only.
    write('<p>{{defaultSubject}}</p>{{#if (eq report.id 4242)}}{{missingHelper report.id}}{{/if}}');
    peer = await startSmtpPeer();
    const env = { SMTP_URL: peer.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET, TEMPLATES_DIR: path.join(dir, 'templates') };
    const dataDir = path.join(dir, 'data');
    relay = await startTestRelay(env, { dataDir, random: () => 0.999 });
    const body = buildBody({ data: buildReportData({ id: 4242 }) });
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    const held = await waitUntil(() => relay!.workerOutcomes.find((o) => o.failure?.code === 'TEMPLATE'), 10_000, 'a template failure');
    expect(held.settled?.state).toBe('retrying');
    const [record] = await relay.relay.store.listDeliveries({ limit: 1 });
    expect(record.nextAttemptAt! - Date.now()).toBeGreaterThan(30_000);

    write('<p>{{defaultSubject}}</p>');
    await relay.stop();
    relay = await startTestRelay(env, { dataDir });
    await peer.waitFor(1, 10_000);
    expect(reportIds(peer)).toEqual([4242]);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'sent');
  }, 60_000);
});

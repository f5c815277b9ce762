import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates } from '../helpers/test-certificates';

const METRICS_TOKEN = 'health-metrics-token-0123456789';
const ADMIN_TOKEN = 'health-admin-token-0123456789ab';

/** GETs JSON; `token` as a bearer token (the details of /readyz need the metrics or admin token). */
async function getJson(url: string, token: string | null = METRICS_TOKEN): Promise<{ status: number; body: any }> {
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  return { status: res.status, body: await res.json() };
}

describe('GET /healthz and /readyz', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
  });

  it('is ready when the store commits, templates are loaded and SMTP answers', async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', METRICS_TOKEN });
    expect(await getJson(`${relay.url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await waitUntil(
      async () => {
        const r = await getJson(`${relay!.url}/readyz`);
        return r.body.checks.smtp.source ? r : undefined;
      },
      10_000,
      'the first SMTP check',
    );
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'ready',
      smtp: { ok: true, state: 'ok' },
      checks: { store: { ok: true }, templates: { ok: true, sets: ['digest', 'notice', 'report'] }, smtp: { ok: true, source: 'verify' } },
    });
  });

  it('stays ready while the SMTP server is down (deliveries are still accepted), names SMTP as failing, and recovers', async () => {
    smtp = await startSmtpPeer();
    const port = smtp.port;
    await smtp.close();
    relay = await startTestRelay({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_TO: 'netops@example.com',
      METRICS_TOKEN,
    });
    const down = await waitUntil(
      async () => {
        const r = await getJson(`${relay!.url}/readyz`);
        return r.body.smtp.ok === false ? r : undefined;
      },
      10_000,
      'SMTP to be reported failing',
    );
    // Accepting into the outbox is the relay's job and still works: 200, with SMTP named (issue 17).
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({
      status: 'ready',
      smtp: { ok: false, state: 'failing', nextTryAt: expect.any(String) },
      checks: { store: { ok: true }, smtp: { ok: false, state: 'failing', source: 'verify', code: 'ESOCKET' } },
    });
    expect(down.body).not.toHaveProperty('failing');
    // Without a token: the status and SMTP's state and next try, not the SMTP server nor its error (issue 14).
    const anonymous = await getJson(`${relay.url}/readyz`, null);
    expect(anonymous).toEqual({
      status: 200,
      body: { status: 'ready', smtp: { ok: false, state: 'failing', nextTryAt: expect.any(String) } },
    });
    expect(JSON.stringify(anonymous.body)).not.toContain(String(port));
    expect((await getJson(`${relay.url}/readyz`, 'not-the-metrics-token-at-all')).body).not.toHaveProperty('checks');
    // The liveness probe does not depend on SMTP: restarting the relay would not help.
    expect((await getJson(`${relay.url}/healthz`)).status).toBe(200);

    smtp = await startSmtpPeer({ port });
    await relay.relay.transportHealth.check();
    expect(await getJson(`${relay.url}/readyz`)).toMatchObject({ status: 200, body: { smtp: { ok: true, state: 'ok' } } });
  });

  it('an expired certificate is failing as ETLS, with the fix, not as a network fault', async () => {
    const certs = createTestCertificates(makeTempDir('health-expired-'), { expired: true });
    smtp = await startSmtpPeer({ server: { secure: true, key: certs.key, cert: certs.cert } });
    relay = await startTestRelay({ SMTP_URL: smtp.url, SMTP_CA_FILE: certs.caFile, MAIL_TO: 'netops@example.com', METRICS_TOKEN });
    const down = await waitUntil(
      async () => {
        const r = await getJson(`${relay!.url}/readyz`);
        return r.body.smtp.ok === false ? r : undefined;
      },
      10_000,
      'SMTP to be reported failing',
    );
    expect(down.body.checks.smtp).toMatchObject({ ok: false, source: 'verify', code: 'ETLS' });
    expect(down.body.checks.smtp.message).toContain('is not trusted (certificate has expired)');
    expect(down.body.checks.smtp.message).toContain('SMTP_CA_FILE');
  });

  it('turns failing when a send cannot reach the server, and passing when a send succeeds', async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', METRICS_TOKEN },
      { random: () => 1, tune: quickRetries(300, 300) },
    );
    await waitUntil(async () => (await getJson(`${relay!.url}/readyz`)).body.checks.smtp.source, 10_000, 'the first check');
    smtp.setBehaviour({ type: 'drop' });
    const body = buildBody({ data: buildReportData({ id: 7 }) });
    expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
    await waitUntil(() => relay!.workerOutcomes.length >= 1, 10_000, 'the dropped send');
    const failing = await getJson(`${relay.url}/readyz`);
    expect(failing.status).toBe(200);
    // A dropped connection is server-wide: the queue is paused until the next probe.
    expect(failing.body.smtp).toMatchObject({ ok: false, state: 'paused', nextTryAt: expect.any(String), pausedSince: expect.any(String) });
    expect(failing.body.checks.smtp).toMatchObject({ ok: false, source: 'send', pauseCause: { code: expect.any(String) } });
    smtp.setBehaviour({ type: 'accept' });
    await smtp.waitFor(1);
    await waitUntil(() => relay!.workerOutcomes.some((o) => o.settled?.state === 'sent'), 10_000, 'the resend');
    expect(await getJson(`${relay.url}/readyz`)).toMatchObject({ status: 200, body: { checks: { smtp: { ok: true, source: 'send' } } } });
  });

  it('shows the details with the admin token too, and to nobody without a token when none is set', async () => {
    smtp = await startSmtpPeer();
    const port = smtp.port;
    await smtp.close();
    relay = await startTestRelay({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_TO: 'netops@example.com',
      ADMIN_TOKEN,
    });
    await waitUntil(
      async () => ((await getJson(`${relay!.url}/readyz`, null)).body.smtp.ok === false ? true : undefined),
      10_000,
      'SMTP to be reported failing',
    );
    const admin = await getJson(`${relay.url}/readyz`, ADMIN_TOKEN);
    expect(admin.body).toMatchObject({ status: 'ready', checks: { smtp: { ok: false, code: 'ESOCKET' } } });
    expect((await getJson(`${relay.url}/readyz`, null)).body).toEqual({
      status: 'ready',
      smtp: { ok: false, state: 'failing', nextTryAt: expect.any(String) },
    });
    await relay.stop();
    relay = await startTestRelay({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_TO: 'netops@example.com',
    });
    await waitUntil(
      async () => ((await getJson(`${relay!.url}/readyz`, null)).body.smtp.ok === false ? true : undefined),
      10_000,
      'SMTP to be reported failing',
    );
    const guessed = (await getJson(`${relay.url}/readyz`, 'any-token-guessed-by-someone')).body;
    expect(guessed).toEqual({ status: 'ready', smtp: { ok: false, state: 'failing', nextTryAt: expect.any(String) } });
    expect(JSON.stringify(guessed)).not.toContain(String(port));
  });

  it('names the store as failing when it cannot commit', async () => {
    relay = await startTestRelay({ METRICS_TOKEN });
    expect((await getJson(`${relay.url}/readyz`)).status).toBe(200);
    await relay.relay.store.close();
    const r = await getJson(`${relay.url}/readyz`);
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      status: 'not ready',
      failing: ['store'],
      smtp: { ok: true, state: 'ok' },
      checks: { store: { ok: false, code: 'STORE_CLOSED' }, templates: { ok: true }, smtp: { ok: true } },
    });
  });
});

import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
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
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com' });
    expect(await getJson(`${relay.url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await waitUntil(async () => {
      const r = await getJson(`${relay!.url}/readyz`);
      return r.body.checks.smtp.source ? r : undefined;
    }, 10_000, 'the first SMTP check');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { store: { ok: true }, templates: { ok: true, sets: ['report'] }, smtp: { ok: true, source: 'verify' } } });
  });

  it('names SMTP as failing while the server is down, and recovers when it is back', async () => {
    smtp = await startSmtpPeer();
    const port = smtp.port;
    await smtp.close();
    relay = await startTestRelay({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_TO: 'netops@example.com', SMTP_CONNECTION_TIMEOUT_MS: '2000' });
    const down = await waitUntil(async () => {
      const r = await getJson(`${relay!.url}/readyz`);
      return r.status === 503 ? r : undefined;
    }, 10_000, '/readyz to fail');
    expect(down.body).toMatchObject({ status: 'not ready', failing: ['smtp'], checks: { store: { ok: true }, smtp: { ok: false, source: 'verify', code: 'ESOCKET' } } });
    // The liveness probe does not depend on SMTP: restarting the relay would not help.
    expect((await getJson(`${relay.url}/healthz`)).status).toBe(200);

    smtp = await startSmtpPeer({ port });
    await relay.relay.smtpHealth.check();
    expect((await getJson(`${relay.url}/readyz`)).status).toBe(200);
  });

  it('turns failing when a send cannot reach the server, and passing when a send succeeds', async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', RETRY_BASE_MS: '300', RETRY_MAX_DELAY_MS: '300' }, { random: () => 1 });
    await waitUntil(async () => (await getJson(`${relay!.url}/readyz`)).body.checks.smtp.source, 10_000, 'the first check');
    smtp.setBehaviour({ type: 'drop' });
    const body = buildBody({ data: buildReportData({ id: 7 }) });
    expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
    await waitUntil(() => relay!.workerOutcomes.length >= 1, 10_000, 'the dropped send');
    const failing = await getJson(`${relay.url}/readyz`);
    expect(failing.status).toBe(503);
    expect(failing.body.checks.smtp).toMatchObject({ ok: false, source: 'send' });
    smtp.setBehaviour({ type: 'accept' });
    await smtp.waitFor(1);
    await waitUntil(() => relay!.workerOutcomes.some((o) => o.type === 'sent'), 10_000, 'the resend');
    expect(await getJson(`${relay.url}/readyz`)).toMatchObject({ status: 200, body: { checks: { smtp: { ok: true, source: 'send' } } } });
  });

  it('names the store as failing when it cannot commit', async () => {
    relay = await startTestRelay({});
    expect((await getJson(`${relay.url}/readyz`)).status).toBe(200);
    await relay.relay.store.close();
    const r = await getJson(`${relay.url}/readyz`);
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ failing: ['store'], checks: { store: { ok: false, code: 'STORE_CLOSED' }, templates: { ok: true }, smtp: { ok: true } } });
  });
});

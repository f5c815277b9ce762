import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'outage-webhook-secret';
const QUEUED = 20;

/**
 * Guarantee 2: SMTP down (connection refused), then answering 421 and 451, then back. The webhook
 * keeps acknowledging while SMTP is down; once it is back every mail arrives once, oldest first.
 */
describe('SMTP outage: refused, then 421/451, then back', () => {
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay | undefined;

  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
  });

  it('acknowledges while SMTP is down and delivers everything once, in order, when it is back', async () => {
    // Take a free port and close it: connections to it are refused.
    const probe = await startSmtpPeer();
    const port = probe.port;
    await probe.close();

    relay = await startTestRelay(
      {
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        MAIL_TO: 'oncall@example.com',
        WEBHOOK_SECRET: SECRET,
        // One connection: the order in which mails reach the server is the order they were sent.
        SMTP_POOL_SIZE: '1',
      },
      { tune: quickRetries(50, 400) },
    );

    for (let i = 0; i < QUEUED; i += 1) {
      const body = buildBody({ data: buildReportData({ id: 500 + i }) });
      const res = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
      expect(res.status).toBe(202);
    }
    // Every acknowledgement above came while nothing listened on the SMTP port.
    await waitUntil(
      () => relay!.workerOutcomes.filter((o) => o.settled?.state === 'retrying').length >= 3 || undefined,
      10_000,
      'probes against the closed port',
    );
    const refused = relay.workerOutcomes.filter((o) => o.settled?.state === 'retrying');
    expect(refused.every((o) => o.settled?.state === 'retrying' && o.failure?.scope === 'server')).toBe(true);
    // Only the oldest delivery probes the server while it is down; the rest wait their turn.
    expect(new Set(refused.map((o) => o.delivery.reportId))).toEqual(new Set([500]));
    expect(relay.relay.worker.breaker.state).not.toBe('closed');
    expect(relay.logs.some((l) => l.includes('the mail server is unavailable: pausing all deliveries'))).toBe(true);

    // The server comes back on the same port, but says 421, 421, 451, 451 before it accepts.
    const replies = [421, 421, 451, 451];
    smtp = await startSmtpPeer({ port, behaviour: { type: 'accept' } });
    smtp.setBehaviour((attempt) =>
      attempt <= replies.length ? { type: 'reject', code: replies[attempt - 1], message: 'try again later' } : { type: 'accept' },
    );

    const mails = await smtp.waitFor(QUEUED, 90_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === QUEUED ? true : undefined), 10_000, 'all sent');
    const order = mails.map((m) => Number(m.parsed.headers.get('x-compliance-report-id')));
    expect(order).toEqual(Array.from({ length: QUEUED }, (_, i) => 500 + i));
    expect(smtp.received).toHaveLength(QUEUED);
    expect(smtp.attempts).toBe(QUEUED + replies.length);
    expect(relay.relay.worker.breaker.state).toBe('closed');
    const dead = (await relay.relay.store.readQueue()).counts;
    expect(dead.dead).toBe(0);
  }, 150_000);

  it('a probe that has nothing to send (its report is suppressed) does not leave the queue paused', async () => {
    const probe = await startSmtpPeer();
    const port = probe.port;
    await probe.close();
    const dir = makeTempDir();
    const routesFile = path.join(dir, 'routes.yaml');
    fs.writeFileSync(routesFile, 'routes:\n  - name: failures\n    to: oncall@example.com\n    notify: on-failure\n');
    relay = await startTestRelay(
      {
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        ROUTES_FILE: routesFile,
        WEBHOOK_SECRET: SECRET,
        SMTP_POOL_SIZE: '1',
      },
      // The failing report that opens the breaker goes dead at once, so the next claim is the passing one.
      { tune: (c) => quickRetries(50, 400)({ ...c, retry: { ...c.retry, maxAttempts: 1 } }) },
    );
    const post = async (data: Record<string, unknown>) => {
      const body = buildBody({ data });
      expect((await postWebhook(relay!.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    };
    await post(buildReportData({ id: 700 }));
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.dead === 1 ? true : undefined),
      10_000,
      'the first report dead',
    );
    expect(relay.relay.worker.breaker.state).toBe('open');
    // Every test passed: the on-failure route suppresses it. It is the probe, and it sends nothing.
    await post(buildReportData({ id: 701, total_passed: 8, middle_passed: 8 }));
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined),
      10_000,
      'the passing report settled',
    );

    smtp = await startSmtpPeer({ port, behaviour: { type: 'accept' } });
    await post(buildReportData({ id: 702 }));
    const mails = await smtp.waitFor(1, 10_000);
    expect(mails[0].parsed.headers.get('x-compliance-report-id')).toBe('702');
    await waitUntil(() => relay!.relay.worker.breaker.state === 'closed' || undefined, 5_000, 'the breaker closed');
  }, 60_000);

  it('a single 451 on one message retries that message alone while the other deliveries flow', async () => {
    smtp = await startSmtpPeer();
    // The first message the server sees is greylisted (451), every later one accepted.
    smtp.setBehaviour((attempt) =>
      attempt === 1 ? { type: 'reject', code: 451, message: '4.7.1 greylisted, try again later' } : { type: 'accept' },
    );
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET, SMTP_POOL_SIZE: '1' },
      // The greylisted message's own backoff is its whole cap (8 s): long after the others went.
      { random: () => 1, tune: (c) => ({ ...c, retry: { ...c.retry, baseMs: 8000 } }) },
    );
    const post = async (id: number) => {
      const body = buildBody({ data: buildReportData({ id }) });
      const res = await postWebhook(relay!.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
      expect(res.status).toBe(202);
      return res.json.id as number;
    };
    const greylisted = await post(600);
    await waitUntil(() => relay!.workerOutcomes.find((o) => o.settled?.state === 'retrying'), 10_000, 'the 451');
    for (let id = 601; id <= 604; id += 1) await post(id);

    const flowed = await smtp.waitFor(4, 10_000);
    expect(flowed.map((m) => Number(m.parsed.headers.get('x-compliance-report-id')))).toEqual([601, 602, 603, 604]);
    // The others went while the greylisted one waited on its own backoff; the queue never paused.
    expect((await relay.relay.store.getDelivery(greylisted))?.state).toBe('retrying');
    expect(relay.relay.worker.breaker.state).toBe('closed');
    const retry = relay.workerOutcomes.find((o) => o.settled?.state === 'retrying');
    expect(retry).toMatchObject({ failure: { code: 'SMTP_4XX', scope: 'message' }, delivery: { reportId: 600 } });
    expect(relay.logs.some((l) => l.includes('pausing all deliveries'))).toBe(false);

    const all = await smtp.waitFor(5, 30_000);
    expect(Number(all[4].parsed.headers.get('x-compliance-report-id'))).toBe(600);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 5 ? true : undefined), 10_000, 'all sent');
    // Each mail once: five accepted, one greylisted attempt.
    expect(smtp.received).toHaveLength(5);
    expect(smtp.attempts).toBe(6);
  }, 60_000);
});

import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'duplicates-webhook-secret';

/** Guarantee 4: the idempotency key `data.id@data.created` decides; the envelope around it does not. */
describe('duplicates never produce a second mail', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET });
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  const post = (body: Buffer) => postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
  /** Waits until the outbox holds `n` deliveries, all sent; then the SMTP server has seen every send. */
  const allSent = async (n: number) => {
    await waitUntil(
      async () => {
        const c = (await relay.relay.store.readQueue()).counts;
        return c.sent === n && c.queued + c.sending + c.retrying + c.dead === 0 ? c : undefined;
      },
      15_000,
      `${n} deliveries sent`,
    );
  };

  it('the same body posted 20 times in parallel is stored once and mailed once', async () => {
    const body = buildBody({ data: buildReportData({ id: 7 }) });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(19).fill(200), 202]);
    const ids = new Set(answers.map((a) => a.json.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.json.status === 'duplicate')).toHaveLength(19);
    await allSent(1);
    expect(smtp.received).toHaveLength(1);
  });

  it('a NetBox retry, a requeue days later and a replay with a new envelope are all the same report', async () => {
    const data = buildReportData({ id: 42 });
    const original = buildBody({ version: '4.6', data });
    expect((await post(original)).status).toBe(202);
    await allSent(1);
    // NetBox's own retry / RQ requeue: the identical bytes, after the mail went out.
    expect((await post(original)).json).toMatchObject({ status: 'duplicate' });
    // An operator replaying the report from another NetBox version's envelope, later: same data.id@data.created.
    const replay = buildBody({ version: '4.7', data, timestamp: '2026-04-01T08:00:00.000000+00:00' });
    expect((await post(replay)).json).toMatchObject({ status: 'duplicate' });
    await allSent(1);
    expect(smtp.received).toHaveLength(1);
  });

  it('a different report id, or the same id with another creation time (another NetBox), is a new mail', async () => {
    expect((await post(buildBody({ data: buildReportData({ id: 42 }) }))).status).toBe(202);
    expect((await post(buildBody({ data: buildReportData({ id: 43 }) }))).status).toBe(202);
    expect((await post(buildBody({ data: buildReportData({ id: 42, created: '2025-01-01T00:00:00.000000Z' }) }))).status).toBe(202);
    await allSent(3);
    expect(smtp.received.map((m) => m.parsed.headers.get('x-compliance-report-id')).sort()).toEqual(['42', '42', '43']);
  });
});

import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { runCliCaptured } from '../helpers/run-cli';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'retention-webhook-secret';
const DAY_MS = 86_400_000;

/**
 * Guarantee 10: sent deliveries (row and stored body) are pruned by the relay's own timer after
 * RETENTION_DAYS; dead ones stay until an operator requeues them or prunes them explicitly.
 */
describe('retention', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  // The relay's clock: 40 days ago while the deliveries arrive, then today.
  let now = Date.now() - 40 * DAY_MS;

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    smtp.setBehaviour((attempt) => (attempt === 2 ? { type: 'reject', code: 554, message: 'rejected' } : { type: 'accept' }));
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('prunes sent deliveries older than RETENTION_DAYS on its own and keeps dead ones until `prune --dead`', async () => {
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        SMTP_POOL_SIZE: '1',
        MAIL_TO: 'oncall@example.com',
        WEBHOOK_SECRET: SECRET,
        RETENTION_DAYS: '30',
      },
      // Pruning every 50 ms rather than hourly, so the test sees it happen on its own.
      { clock: { now: () => now }, tune: (c) => ({ ...c, retention: { ...c.retention, intervalMs: 50 } }) },
    );
    const post = async (id: number) => {
      const body = buildBody({ data: buildReportData({ id }) });
      return postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    };
    for (const id of [1, 2, 3]) expect((await post(id)).status).toBe(202);
    await waitUntil(
      async () => {
        const c = (await relay.relay.store.readQueue()).counts;
        return c.sent === 2 && c.dead === 1 ? c : undefined;
      },
      10_000,
      '2 sent, 1 dead',
    );

    // 10 days later: nothing is old enough yet (the timer runs every 50 ms).
    now += 10 * DAY_MS;
    await new Promise((r) => setTimeout(r, 200));
    expect((await relay.relay.store.listDeliveries()).length).toBe(3);

    // 40 days after they were sent: the sent ones go, the dead one stays for the operator.
    now += 30 * DAY_MS;
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.sent === 0 ? true : undefined), 5_000, 'sent pruned');
    const left = await relay.relay.store.listDeliveries();
    expect(left.map((d) => [d.reportId, d.state])).toEqual([[2, 'dead']]);
    // The rows are gone before the prune's commit is synced and logged: wait for the line, not just the count.
    await waitUntil(
      async () => (relay.logs.some((l) => l.includes('pruned 2 sent deliveries older than 30 days')) ? true : undefined),
      5_000,
      'prune logged',
    );
    // The stored body went with the row: nothing of report 1 is left in the file.
    const db = (relay.relay.store as unknown as { database: { prepare(sql: string): { get(): { n: number } } } }).database;
    expect(db.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE report_id IN (1, 3)').get().n).toBe(0);

    // The explicit command: dead deliveries last changed more than 30 days ago (by the real clock).
    const env = { DATA_DIR: relay.dataDir, MAIL_TO: 'oncall@example.com' };
    expect((await runCliCaptured(['prune', '--dead', '--older-than', '60d'], env)).stdout).toContain('Pruned 0 dead deliveries');
    const pruned = await runCliCaptured(['prune', '--dead', '--older-than', '30d'], env);
    expect(pruned).toMatchObject({ code: 0, stdout: expect.stringContaining('Pruned 1 dead delivery') });
    expect(await relay.relay.store.listDeliveries()).toEqual([]);
    expect((await runCliCaptured(['prune', '--older-than', '30d'], env)).code).toBe(64);
  });
});

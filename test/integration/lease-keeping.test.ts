import type { SqliteStore } from '../../src/store';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'lease-keeping-secret';
const LEASE_MS = 600;

/**
 * A batch in flight keeps its claims alive. When a send is slow (a server that takes its time to
 * answer), the batch outlasts LEASE_MS: were its leases not extended, another replica (or this relay's
 * next claim) would take those deliveries again and mail them twice.
 */
describe('leases of a batch in flight', () => {
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay | undefined;

  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
  });

  it('outlive a slow send: the lease stays ahead, and every report is mailed once', async () => {
    let answer!: () => void;
    const slow = new Promise<void>((resolve) => (answer = resolve));
    smtp = await startSmtpPeer();
    // The first mail is held by the server for several leases; the rest are answered at once.
    smtp.setBehaviour((attempt) => ({ type: 'accept', ...(attempt === 1 ? { after: slow } : {}) }));
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET, SMTP_POOL_SIZE: '1' },
      { tune: (c) => ({ ...c, worker: { ...c.worker, leaseMs: LEASE_MS } }) },
    );
    const post = async (id: number) => {
      const body = buildBody({ data: buildReportData({ id }) });
      expect((await postWebhook(relay!.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    };
    await post(801);
    await waitUntil(() => relay!.relay.worker.inFlight >= 1 || undefined, 10_000, 'the first delivery in flight');
    const db = (relay.relay.store as SqliteStore).database;
    const leaseOf801 = () =>
      db.prepare('SELECT state, lease_until AS leaseUntil FROM deliveries WHERE report_id = 801').get() as {
        state: string;
        leaseUntil: number;
      };
    const claimed = leaseOf801();
    await post(802);
    await post(803);
    // Four leases long: an unkept claim would have run out by now.
    await new Promise((resolve) => setTimeout(resolve, 4 * LEASE_MS));
    const lease = leaseOf801();
    expect(lease.state).toBe('sending');
    // Extended past the claim's own lease (compared with the claim, not the clock, so a loaded machine's late tick can't fail it).
    expect(lease.leaseUntil).toBeGreaterThan(claimed.leaseUntil + LEASE_MS);
    answer();
    await smtp.waitFor(3, 10_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all three sent');
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    const reports = smtp.received.map((m) => m.parsed.headers.get('x-compliance-report-id'));
    expect(reports).toEqual(['801', '802', '803']);
  }, 60_000);
});

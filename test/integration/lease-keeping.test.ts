import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'lease-keeping-secret';
const LEASE_MS = 600;

/**
 * Deliveries prepared ahead wait for a send slot. When the send in front of them is slow (a server
 * that takes its time to answer), that wait outlasts LEASE_MS: their claims must be kept alive, or
 * they are claimed again and mailed twice.
 */
describe('leases of deliveries waiting for a send slot', () => {
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay | undefined;

  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
  });

  it('outlive a slow send in front of them: every report is mailed once', async () => {
    let answer!: () => void;
    const slow = new Promise<void>((resolve) => (answer = resolve));
    smtp = await startSmtpPeer();
    // The first mail is held by the server for several leases; the rest are answered at once.
    smtp.setBehaviour((attempt) => ({ type: 'accept', ...(attempt === 1 ? { after: slow } : {}) }));
    relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'oncall@example.com',
      WEBHOOK_SECRET: SECRET,
      SMTP_POOL_SIZE: '1',
      LEASE_MS: String(LEASE_MS),
      NETBOX_ENRICH_BUDGET_MS: '200',
    });
    for (const id of [801, 802, 803]) {
      const body = buildBody({ data: buildReportData({ id }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    }
    await waitUntil(() => relay!.relay.worker.inFlight === 3 || undefined, 10_000, 'three deliveries in flight');
    // Four leases long: an unkept claim of 802 or 803 would have been taken again by now.
    await new Promise((resolve) => setTimeout(resolve, 4 * LEASE_MS));
    answer();
    await smtp.waitFor(3, 10_000);
    await waitUntil(async () => ((await relay!.relay.store.countByState()).sent === 3 ? true : undefined), 10_000, 'all three sent');
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    const reports = smtp.received.map((m) => m.parsed.headers.get('x-compliance-report-id'));
    expect(reports).toEqual(['801', '802', '803']);
  }, 60_000);
});

import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres';
import { postWebhook, smtpTimeouts, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'store-away-webhook-secret';
const CREATED = '2026-03-06T15:11:18.123456Z';
/** How long NetBox takes to answer the results page: the database is stopped meanwhile. */
const NETBOX_DELAY_MS = 2500;

jest.setTimeout(120_000);

/**
 * Composing a report reads its series' history from the store (the trend, the chart) after NetBox has
 * answered. A database that goes away in between says nothing about the report: the delivery must not
 * be declared dead (as a template error would be), but come back once the store does.
 */
describe('the store goes away while a report is being composed', () => {
  let db: PrivatePostgres;
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;

  beforeAll(async () => {
    db = await startPrivatePostgres();
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
  });
  afterAll(async () => {
    await relay?.stop();
    await netbox.close();
    await smtp.close();
    db.destroy();
  });

  test('the delivery is tried again once the database is back, and mailed once (not dead)', async () => {
    relay = await startTestRelay(
      {
        DATABASE_URL: db.url,
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: SECRET,
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
      },
      // The claim left by the failed preparation comes back after its lease (kept above the SMTP timeouts
      // and the enrichment budget, as the relay's own are).
      {
        tune: (c) =>
          smtpTimeouts(3_000)({ ...c, worker: { ...c.worker, leaseMs: 6000, pollMs: 100 }, netbox: { ...c.netbox, enrichBudgetMs: 4000 } }),
      },
    );
    const results = buildResults(6, { fails: (i) => i % 2 === 0 });
    netbox.reports.set(41, { id: 41, created: CREATED, results });
    netbox.slowOffsets.set(0, NETBOX_DELAY_MS);
    const body = buildBody({ version: '4.6', data: buildReportData({ id: 41, created: CREATED, ...countResults(results) }) });
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);

    // The worker is waiting for NetBox's answer: the database goes away now.
    await waitUntil(() => netbox.requests.some((r) => r.path.includes('/test-results/')) || undefined, 20_000, 'the results request');
    db.stop();
    try {
      await waitUntil(
        () => relay!.logs.some((l) => l.includes('cannot compose: the store is unavailable')) || undefined,
        20_000,
        'the failed preparation to be logged',
      );
      expect(relay.logs.join('\n')).not.toContain('delivery is dead');
    } finally {
      db.start();
    }
    netbox.slowOffsets.clear();

    const [mail] = await smtp.waitFor(1, 60_000);
    expect(mail.parsed.subject).toMatch(/^First: 50\.0%, 3 HIGH failing \u2014 report 41 /);
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined),
      30_000,
      'the delivery recorded as sent',
    );
    expect((await relay.relay.store.readQueue()).counts).toMatchObject({ sent: 1, dead: 0 });
    expect(relay.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
    expect(smtp.received).toHaveLength(1);
  });
});

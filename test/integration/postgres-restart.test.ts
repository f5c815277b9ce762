import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres';
import { postWebhook, smtpTimeouts, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'restart-webhook-secret';
const SMTP_POOL_SIZE = 3;

jest.setTimeout(300_000);

describe('PostgreSQL restarts while the relay runs', () => {
  let db: PrivatePostgres;
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;

  beforeAll(async () => {
    db = await startPrivatePostgres();
    smtp = await startSmtpPeer();
  });
  afterAll(async () => {
    await relay?.stop();
    await smtp.close();
    db.destroy();
  });

  const body = (id: number) => buildBody({ version: '4.6', data: buildReportData({ id }) });
  const post = (id: number) => postWebhook(relay!.webhookUrl, body(id), { 'X-Hook-Signature': netboxSignature(body(id), SECRET) });
  const mailedIds = () => new Set(smtp.received.map((m) => /\u2014 report (\d+)/.exec(String(m.parsed.subject))?.[1]));

  test('503 while it is down (never a false 2xx), and the queue resumes when it is back', async () => {
    relay = await startTestRelay(
      {
        DATABASE_URL: db.url,
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: SECRET,
        SMTP_POOL_SIZE: String(SMTP_POOL_SIZE),
        TEMPLATES_DIR: path.resolve(__dirname, '../fixtures/templates-light'),
      },
      // A claim whose preparation failed (the database went away before its send) comes back after its
      // lease; the lease stays above the SMTP timeouts so that a slow send is never taken over.
      { tune: (c) => smtpTimeouts(8_000)({ ...c, worker: { ...c.worker, leaseMs: 20_000, pollMs: 100 } }) },
    );

    // Before: accepted and mailed.
    for (let id = 1; id <= 10; id += 1) expect((await post(id)).status).toBe(202);
    // Queued and possibly mid-send when the database goes away.
    for (let id = 11; id <= 20; id += 1) expect((await post(id)).status).toBe(202);

    db.stop();
    try {
      for (let id = 21; id <= 30; id += 1) {
        const res = await post(id);
        expect(res.status).toBe(503);
        expect(res.json.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
        expect(res.headers.get('retry-after')).not.toBeNull();
      }
      // A retry by NetBox of a delivery already stored is not acknowledged either: nothing can be checked.
      expect((await post(5)).status).toBe(503);
    } finally {
      db.start();
    }

    // NetBox retries what got a 503: once the pool reconnects, each is accepted (and nothing else is answered).
    for (let id = 21; id <= 30; id += 1) {
      await waitUntil(
        async () => {
          const { status } = await post(id);
          expect([202, 503]).toContain(status);
          return status === 202 ? true : undefined;
        },
        30_000,
        `delivery ${id} to be accepted after the restart`,
      );
    }
    expect((await post(5)).status).toBe(200); // the earlier ones are still there: a duplicate

    await waitUntil(() => (mailedIds().size === 30 ? true : undefined), 120_000, 'all 30 reports to be mailed');
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === 30 ? true : undefined),
      60_000,
      'all 30 recorded as sent',
    );
    const expected = new Set(Array.from({ length: 30 }, (_, i) => String(i + 1)));
    expect(mailedIds()).toEqual(expected);
    // A send that finished while the database was down is recorded once it is back (issue 21): no mail twice.
    expect(smtp.received.length).toBe(30);
    expect(relay.logs.join('\n')).toContain('delivery NOT stored');
  });
});

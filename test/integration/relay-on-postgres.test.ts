import { PgStore } from '../../src/store';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

describe('DATABASE_URL switches the relay to PostgreSQL', () => {
  let schema: TestSchema;
  let smtp: SmtpPeer;
  const secret = 'pg-webhook-secret';

  beforeEach(async () => {
    schema = await createTestSchema('relay_pg');
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await smtp.close();
    await schema.drop();
  });

  test('a delivery is stored in PostgreSQL, mailed once, and a retry by NetBox is a duplicate', async () => {
    const relay = await startTestRelay({
      DATABASE_URL: schema.url,
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      WEBHOOK_SECRET: secret,
    });
    try {
      const body = buildBody({ version: '4.6', data: buildReportData({ id: 501 }) });
      const headers = { 'X-Hook-Signature': netboxSignature(body, secret) };
      const first = await postWebhook(relay.webhookUrl, body, headers);
      expect(first.status).toBe(202);
      const again = await postWebhook(relay.webhookUrl, body, headers);
      expect(again).toMatchObject({ status: 200, json: { status: 'duplicate', id: first.json.id } });

      const [mail] = await smtp.waitFor(1);
      expect(mail.parsed.subject).toContain('\u2014 report 501');
      await waitUntil(async () => (await relay.relay.store.getDelivery(first.json.id))?.state === 'sent', 10_000, 'sent state');
      const { rows } = await schema.query<{ state: string; body: Buffer }>('SELECT state, body FROM deliveries');
      expect(rows).toHaveLength(1);
      expect(Buffer.compare(rows[0].body, body)).toBe(0);
      // The password-free URL is what the boot log may show; the secret never appears.
      expect(relay.logs.join('\n')).not.toContain(secret);
    } finally {
      await relay.stop();
    }
    expect(smtp.received).toHaveLength(1);
  });

  test("a starting replica leaves another replica's live lease alone", async () => {
    // Another replica has claimed a delivery and is sending it right now.
    const other = new PgStore({ connectionString: schema.url });
    await other.insertDelivery({
      dedupKey: '900@2026-11-21T10:00:00+00:00',
      reportId: 900,
      reportCreated: '2026-11-21T10:00:00+00:00',
      completedAt: '2026-11-21T10:00:01+00:00',
      sender: '127.0.0.1',
      body: buildBody({ version: '4.6', data: buildReportData({ id: 900 }) }),
      receivedAt: Date.now(),
    });
    const [claimed] = await other.claimDue({ now: Date.now(), limit: 1, owner: 'replica-other', leaseMs: 600_000 });
    expect(claimed).toBeDefined();

    const relay = await startTestRelay({ DATABASE_URL: schema.url, SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com' });
    try {
      await new Promise((r) => setTimeout(r, 300)); // a few worker polls (the harness polls every 50 ms)
      const { rows } = await schema.query<{ state: string; lease_owner: string }>('SELECT state, lease_owner FROM deliveries');
      expect(rows).toEqual([{ state: 'sending', lease_owner: 'replica-other' }]);
      expect(smtp.received).toHaveLength(0);
    } finally {
      await relay.stop();
      await other.close();
    }
  });
});

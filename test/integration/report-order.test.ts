import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'report-order-webhook-secret';
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];

/** A report of the series: 12 results, failing where `fails` says, created `created`. */
function publish(netbox: NetboxDouble, id: number, created: string, fails: (i: number) => boolean): Buffer {
  const results: ResultSpec[] = buildResults(12, { firstId: id * 100, fails, tests: TESTS });
  netbox.reports.set(id, { id, created, results });
  return buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
}

async function deliver(relay: TestRelay, body: Buffer): Promise<void> {
  const res = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
  expect(res.status).toBe(202);
}

function mailOf(mails: ReceivedMail[], reportId: number): ReceivedMail {
  const mail = mails.find((m) => m.parsed.headers.get('x-compliance-report-id') === String(reportId));
  if (!mail) throw new Error(`no mail for report ${reportId}`);
  return mail;
}

describe('the comparison follows NetBox order (created, then id), not arrival or mailing', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let dir: string;
  const relays: TestRelay[] = [];
  beforeEach(async () => {
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    dir = makeTempDir('report-order-');
  });
  afterEach(async () => {
    await Promise.allSettled(relays.splice(0).map((r) => r.stop()));
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    SMTP_URL: smtp.url,
    MAIL_TO: 'netops@example.com',
    WEBHOOK_SECRET: SECRET,
    NETBOX_URL: netbox.url,
    NETBOX_TOKEN: TOKEN,
    MAIL_TIMEZONE: 'UTC',
  });

  describe('two relays on one PostgreSQL, the SMTP server holding the first mail', () => {
    let schema: TestSchema;
    beforeEach(async () => {
      schema = await createTestSchema('report_order');
    });
    afterEach(async () => {
      await Promise.allSettled(relays.splice(0).map((r) => r.stop()));
      await schema.drop();
    });

    test('a successor composed while its predecessor is still being mailed by the other relay compares with it', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      // The first mail's answer waits until the test releases it: report 101 stays in flight meanwhile.
      smtp.setBehaviour((attempt) => (attempt === 1 ? { type: 'accept', after: held } : { type: 'accept' }));
      for (const name of ['a', 'b'])
        relays.push(await startTestRelay({ ...env(), DATABASE_URL: schema.url }, { dataDir: path.join(dir, name) }));
      const [one, two] = relays;
      // 101: ntp-servers fails on sw-000 and sw-002; 102, an hour later: snmp-community now fails on sw-001 too.
      const first = publish(netbox, 101, '2026-05-04T08:00:00.000000Z', (i) => i === 0 || i === 2);
      const second = publish(netbox, 102, '2026-05-04T09:00:00.000000Z', (i) => i === 0 || i === 1 || i === 2);

      await deliver(one, first);
      await waitUntil(() => smtp.attempts >= 1 || undefined, 20_000, 'report 101 handed to the SMTP server');
      await deliver(two, second);
      // The held mail is 101's: the one that arrives is 102's, mailed by the relay that is not waiting.
      const [mail] = await smtp.waitFor(1, 30_000);
      expect(mail.parsed.headers.get('x-compliance-report-id')).toBe('102');
      expect(mail.parsed.headers.get('x-compliance-verdict')).toBe('worse');
      expect(mail.parsed.headers.get('x-compliance-arrived')).toBeUndefined();
      const text = String(mail.parsed.text);
      expect(text).toContain('Compared with report 101 (created');
      // Compared whole, failing sets too: what newly fails is named, nothing says "first".
      expect(text).toMatch(/Newly failing: \[MIDDLE\] snmp-community \(1 device\)/);
      expect(text).not.toContain('nothing to compare with');
      expect(text).not.toContain('Compared on counts only');

      release();
      const mails = await smtp.waitFor(2, 30_000);
      expect(mailOf(mails, 101).parsed.headers.get('x-compliance-verdict')).toBe('first');
      await waitUntil(
        async () => {
          const { rows } = await schema.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM deliveries WHERE state = 'sent'`);
          return rows[0].n === 2 || undefined;
        },
        20_000,
        'both deliveries recorded as sent',
      );
      expect(smtp.received).toHaveLength(2);
    });
  });

  test('a report that arrives after a newer one compares with its own predecessor, says it arrived late, and leaves the newer mail as sent', async () => {
    const relay = await startTestRelay(env(), { dataDir: path.join(dir, 'sqlite') });
    relays.push(relay);
    const store = relay.relay.store;
    // 200: sw-000 fails ntp-servers; 201 (late): sw-001 fails snmp-community too; 202: sw-000 is fixed.
    const p200 = publish(netbox, 200, '2026-05-04T08:00:00.000000Z', (i) => i === 0);
    const p201 = publish(netbox, 201, '2026-05-04T09:00:00.000000Z', (i) => i === 0 || i === 1);
    const p202 = publish(netbox, 202, '2026-05-04T10:00:00.000000Z', () => false);

    await deliver(relay, p200);
    await smtp.waitFor(1);
    await deliver(relay, p202);
    const [, newer] = await smtp.waitFor(2);
    expect(newer.parsed.headers.get('x-compliance-report-id')).toBe('202');
    expect(String(newer.parsed.text)).toContain('Compared with report 200 (created');
    expect(newer.parsed.headers.get('x-compliance-arrived')).toBeUndefined();
    const newerDelivery = await waitUntil(
      async () => (await store.listDeliveries({ reportId: 202, state: 'sent' }))[0],
      20_000,
      'report 202 recorded as sent',
    );
    const newerKept = await store.getSentMessage(newerDelivery.id, 'default');
    const newerRow = await store.findReport(newerDelivery.dedupKey);

    await deliver(relay, p201);
    const [, , late] = await smtp.waitFor(3);
    expect(late.parsed.headers.get('x-compliance-report-id')).toBe('201');
    expect(late.parsed.headers.get('x-compliance-arrived')).toBe('late');
    // Against 200, created before it: snmp-community newly fails on sw-001, ntp-servers still fails on sw-000.
    expect(late.parsed.headers.get('x-compliance-verdict')).toBe('worse');
    const text = String(late.parsed.text);
    expect(text).toContain('Arrived late: a newer report of this series was received before it.');
    expect(text).toContain('It is compared with report 200, created before it');
    expect(text).toContain('Compared with report 200 (created');
    expect(text).toMatch(/Newly failing: \[MIDDLE\] snmp-community \(1 device\)/);
    expect(String(late.parsed.html)).toContain('Arrived late: a newer report of this series was received before it.');

    // What 202's mail said stands: its kept copy is the bytes the server took, its history row is as it was.
    expect(newerKept?.raw.equals(newer.raw)).toBe(true);
    expect((await store.getSentMessage(newerDelivery.id, 'default'))?.raw.equals(newer.raw)).toBe(true);
    expect(await store.findReport(newerDelivery.dedupKey)).toEqual(newerRow);
    expect(smtp.received).toHaveLength(3);
  });
});

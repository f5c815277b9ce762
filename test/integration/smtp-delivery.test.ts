import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import type { Config } from '../../src/config';
import { postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

/** Fast retries for tests; the relay's own span up to two days. */
const FAST_RETRY = quickRetries(20, 100);

describe('sending through a real SMTP server', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  beforeEach(async () => {
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await smtp.close();
  });

  const start = (tune: (config: Config) => Config = FAST_RETRY) =>
    startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Relay <relay@example.com>',
        MAIL_TO: 'a@example.com,B Team <b@example.com>',
        MAIL_CC: 'cc@example.com',
        MAIL_BCC: 'audit@example.com',
      },
      { tune },
    );

  it('a 451 answer is retried and the mail arrives once, with the Message-ID derived from the delivery', async () => {
    smtp.setBehaviour((attempt) => (attempt === 1 ? { type: 'reject', code: 451, message: 'try again later' } : { type: 'accept' }));
    relay = await start();
    const body = buildBody({ data: buildReportData({ id: 77 }) });
    const res = await postWebhook(relay.webhookUrl, body);
    expect(res.status).toBe(202);
    const [mail] = await smtp.waitFor(1);
    const record = await waitUntil(async () => {
      const d = await relay!.relay.store.getDelivery(res.json.id);
      return d?.state === 'sent' ? d : undefined;
    });
    expect(record.attempts).toBe(2);
    expect(mail.parsed.messageId).toBe(record.messageId);
    expect(record.messageId).toMatch(/^<report-77\.d\d+\.[0-9a-f]{16}@example\.com>$/);
    expect(smtp.attempts).toBe(2);
    expect(smtp.received).toHaveLength(1);
  });

  it('cc and bcc are envelope recipients; bcc never appears in the headers', async () => {
    relay = await start();
    await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 78 }) }));
    const [mail] = await smtp.waitFor(1);
    expect(mail.envelope.to.sort()).toEqual(['a@example.com', 'audit@example.com', 'b@example.com', 'cc@example.com']);
    expect(mail.raw.toString('utf8')).not.toMatch(/^bcc:/im);
    expect(mail.raw.toString('utf8')).not.toContain('audit@example.com');
    expect(mail.parsed.headers.get('x-auto-response-suppress')).toBe('All');
    // multipart/alternative: a text and an HTML part
    expect(mail.parsed.text).toContain('Compliance report 78');
    expect(mail.parsed.html).toContain('Compliance report 78');
    expect(mail.raw.toString('utf8')).toMatch(/Content-Type: multipart\/alternative/i);
  });

  it('a 550 answer is permanent: the delivery is dead at once with the reason, and no mail is sent', async () => {
    smtp.setBehaviour({ type: 'reject', code: 550, message: 'mailbox unavailable' });
    relay = await start();
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 79 }) }));
    const record = await waitUntil(async () => {
      const d = await relay!.relay.store.getDelivery(res.json.id);
      return d?.state === 'dead' ? d : undefined;
    });
    expect(record.attempts).toBe(1);
    expect(record.lastErrorCode).toBe('SMTP_5XX');
    expect(record.lastError).toContain('mailbox unavailable');
    expect(smtp.received).toHaveLength(0);
  });

  it('a dropped connection is retried until the server accepts', async () => {
    smtp.setBehaviour((attempt) => (attempt <= 2 ? { type: 'drop' } : { type: 'accept' }));
    relay = await start();
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 80 }) }));
    await smtp.waitFor(1);
    const record = await waitUntil(async () => {
      const d = await relay!.relay.store.getDelivery(res.json.id);
      return d?.state === 'sent' ? d : undefined;
    });
    expect(record.attempts).toBe(3);
  });

  it('gives up after its last attempt at a transient failure and keeps the last error', async () => {
    smtp.setBehaviour({ type: 'reject', code: 452, message: 'insufficient storage' });
    relay = await start((c) => FAST_RETRY({ ...c, retry: { ...c.retry, maxAttempts: 3 } }));
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 81 }) }));
    const record = await waitUntil(async () => {
      const d = await relay!.relay.store.getDelivery(res.json.id);
      return d?.state === 'dead' ? d : undefined;
    });
    expect(record.attempts).toBe(3);
    expect(record.lastError).toMatch(/gave up after 3 attempts.*insufficient storage/);
  });

  it('a restart resumes every pending delivery', async () => {
    smtp.setBehaviour({ type: 'reject', code: 421, message: 'closing' });
    relay = await start(quickRetries(60_000, 60_000));
    const dataDir = relay.dataDir;
    for (const id of [90, 91, 92]) await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id }) }));
    // The first failure pauses the queue: the others wait for its end, queued or retrying.
    await waitUntil(async () => {
      const { retrying, queued } = (await relay!.relay.store.readQueue()).counts;
      return retrying >= 1 && retrying + queued === 3 ? true : undefined;
    });
    await relay.stop();
    relay = undefined;
    smtp.setBehaviour({ type: 'accept' });
    // Retries are due in up to a minute; a restart does not lose them, and requeued ones go at once.
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'a@example.com' },
      { dataDir, clock: { now: () => Date.now() + 120_000 }, tune: FAST_RETRY },
    );
    const mails = await smtp.waitFor(3);
    expect(mails.map((m) => m.parsed.headers.get('x-compliance-report-id')).sort()).toEqual(['90', '91', '92']);
  });
});

describe('zero configuration: mails become .eml files', () => {
  it('writes one parseable .eml per report under DATA_DIR/mail and logs its path', async () => {
    const relay = await startTestRelay({});
    try {
      const body = fs.readFileSync(path.join(__dirname, '../../examples/delivery-netbox-3.6.json'));
      const res = await postWebhook(relay.webhookUrl, body);
      expect(res.status).toBe(202);
      const dir = path.join(relay.dataDir, 'mail');
      const files = await waitUntil(() => {
        const f = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.eml')) : [];
        return f.length > 0 ? f : undefined;
      });
      expect(files).toHaveLength(1);
      const mail = await simpleParser(fs.readFileSync(path.join(dir, files[0])));
      expect(mail.subject).toBe('First: 62.5%, 3 failing, no HIGH \u2014 report 29');
      expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('compliance-reports@localhost');
      expect(mail.text).toContain('MIDDLE           5/8   62.5%');
      expect(mail.text).toContain('/plugins/validity/reports/29/');
      await waitUntil(() => relay.logs.find((l) => l.includes(path.join(dir, files[0]))), 5000, 'the log line with the path');
    } finally {
      await relay.stop();
    }
  });
});

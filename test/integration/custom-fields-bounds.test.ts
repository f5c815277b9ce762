import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

/** Deep or huge custom_fields are a 422 naming the field, never a 500; other deliveries go on. */

const DEPTH = 100_000;

/** A signed-shape body whose custom field `name` is `raw` (JSON text too deep for JSON.stringify to build). */
function bodyWithField(id: number, name: string, raw: string): Buffer {
  const text = buildBody({
    version: '4.6',
    data: { ...buildReportData({ id }), custom_fields: { owner: 'netops', [name]: 'RAW-VALUE' } },
  }).toString('utf8');
  return Buffer.from(text.replace('"RAW-VALUE"', raw), 'utf8');
}

describe('custom_fields bounds at the webhook', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
    // Bodies up to 4 MiB: the custom fields' own bounds are under test here, not the body's.
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com' },
      { tune: (c) => ({ ...c, webhook: { ...c.webhook, maxBytes: 4 * 1024 * 1024 } }) },
    );
  });
  afterAll(async () => {
    await relay.stop();
    await smtp.close();
  });

  it.each([
    ['a list nested 100,000 deep', 'deep', `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`, 'is nested deeper than 32 levels'],
    ['an object nested 100,000 deep', 'nested', `${'{"a": '.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`, 'is nested deeper than 32 levels'],
    ['a 1 MB string', 'huge', JSON.stringify('x'.repeat(1024 * 1024)), 'is larger than 524288 characters as JSON'],
    [
      'a list of 200,000 numbers',
      'wide',
      `[${Array.from({ length: 200_000 }, () => '1').join(', ')}]`,
      'is larger than 524288 characters as JSON',
    ],
  ])(
    '%s: 422 REPORT_INVALID naming data.custom_fields.%s, nothing stored, nothing logged as an error',
    async (_what, name, raw, message) => {
      const before = relay.logs.length;
      const res = await postWebhook(relay.webhookUrl, bodyWithField(11, name, raw));
      expect(res.status).toBe(422);
      expect(res.json).toEqual({
        error: {
          code: 'REPORT_INVALID',
          message: expect.any(String),
          retryable: false,
          issues: [{ path: `data.custom_fields.${name}`, message }],
        },
      });
      const errors = relay.logs.slice(before).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
      expect(errors).toEqual([]);
      expect(await relay.relay.store.listDeliveries({ limit: 10 })).toEqual([]);
    },
  );

  it('a report with ordinary nested custom fields (up to the bound) is accepted and mailed', async () => {
    const nested = `${'['.repeat(31)}"ok"${']'.repeat(31)}`;
    const res = await postWebhook(relay.webhookUrl, bodyWithField(12, 'nested', nested));
    expect(res.status).toBe(202);
    const [mail] = await smtp.waitFor(1);
    expect(mail.parsed.subject).toContain('12');
  });
});

import { hrefsOf } from '../helpers/html';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

describe('a signed NetBox delivery becomes exactly one mail over SMTP', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  const secret = 'n3tb0x-webhook-s3cret';

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      MAIL_FROM: 'Compliance <relay@example.com>',
      WEBHOOK_SECRET: secret,
      NETBOX_URL: 'https://netbox.example.com',
    });
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('mails the pass ratios and absolute links, once, even when NetBox retries', async () => {
    const body = buildBody({
      version: '4.6',
      data: buildReportData({
        id: 142,
        total_passed: 95,
        total_count: 108,
        high_passed: 7,
        high_count: 14,
        middle_passed: 58,
        middle_count: 64,
        low_passed: 30,
        low_count: 30,
        custom_fields: { owner: 'Netzwerk-B\u00fcro' },
      }),
    });
    expect(body.toString('latin1')).toContain('Netzwerk-B\\u00fcro');
    const headers = { 'X-Hook-Signature': netboxSignature(body, secret) };

    const first = await postWebhook(relay.webhookUrl, body, headers);
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ status: 'queued', id: expect.any(Number) });
    const again = await postWebhook(relay.webhookUrl, body, headers);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ status: 'duplicate', id: first.json.id });

    const [mail] = await smtp.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received).toHaveLength(1);
    expect(mail.envelope.to).toEqual(['netops@example.com']);
    expect(mail.parsed.subject).toBe('First: 88.0%, 7 HIGH failing \u2014 report 142 \u00b7 netbox.example.com');
    expect(mail.parsed.text).toContain('HIGH            7/14   50.0%');
    expect(mail.parsed.text).toContain('https://netbox.example.com/plugins/validity/reports/142/');
    expect(hrefsOf(String(mail.parsed.html))).toEqual(
      expect.arrayContaining([
        'https://netbox.example.com/plugins/validity/reports/142/',
        'https://netbox.example.com/plugins/validity/test-results/?report_id=142',
        'https://netbox.example.com/api/plugins/validity/test-results/?report_id=142',
      ]),
    );
    expect(mail.parsed.headers.get('auto-submitted')).toBe('auto-generated');
  });
});

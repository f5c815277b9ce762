import fs from 'node:fs';
import path from 'node:path';
import { postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const examples = path.join(__dirname, '../../examples');

describe("the README's two examples, posted in order to a relay without NETBOX_URL", () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  beforeEach(async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com' });
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('seven HIGH failures where there were no HIGH results is worse, whatever the overall percentage did', async () => {
    // 62.5 % with no HIGH results, then 88.0 % with 7 of 14 HIGH results failing.
    expect((await postWebhook(relay.webhookUrl, fs.readFileSync(path.join(examples, 'delivery-netbox-3.6.json')))).status).toBe(202);
    await smtp.waitFor(1);
    expect((await postWebhook(relay.webhookUrl, fs.readFileSync(path.join(examples, 'delivery-netbox-4.6.json')))).status).toBe(202);
    const [first, second] = await smtp.waitFor(2);
    expect(first.parsed.headers.get('x-compliance-verdict')).toBe('first');
    expect(second.parsed.headers.get('x-compliance-verdict')).toBe('worse');
    expect(second.parsed.subject).toBe('Worse: 88.0% (+25.5), 7 HIGH failing, scope changed \u2014 report 142');
  });
});

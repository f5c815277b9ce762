import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE_NAME } from '../../src/store';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

describe('the mail as sent is kept per delivery', () => {
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay;
  afterEach(async () => {
    await relay.stop();
    await smtp?.close();
    smtp = undefined;
  });

  it('keeps exactly the bytes the SMTP server received, and every envelope recipient', async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      MAIL_CC: 'lead@example.com',
      MAIL_BCC: 'audit@example.com',
    });
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 77 }) }));
    expect(res.status).toBe(202);
    const [mail] = await smtp.waitFor(1);
    const kept = await waitUntil(async () => (await relay.relay.store.listSentMessages(res.json.id))[0], 10_000, 'the kept copy');
    expect(kept.raw.equals(mail.raw)).toBe(true);
    expect(kept).toMatchObject({ route: 'default', messageId: mail.parsed.messageId });
    expect(kept.envelopeTo).toEqual(['netops@example.com', 'lead@example.com', 'audit@example.com']);
    expect(mail.envelope.to).toEqual(kept.envelopeTo);
    // Bcc is in the envelope only, never in the bytes.
    expect(kept.raw.toString('utf8')).not.toMatch(/^Bcc:/im);
    expect(kept.subject).toBe(mail.parsed.subject);
    expect(kept.text).toBe(mail.parsed.text);
    expect(kept.response).toMatch(/^250 /);
    // Kept once: the row holds the bytes, and the parts shown are read back from them.
    expect(kept.html).toContain(mail.parsed.subject!.replace(/&/g, '&amp;').slice(0, 20));
    const db = new Database(path.join(relay.dataDir, SQLITE_FILE_NAME), { readonly: true });
    try {
      expect(db.prepare('SELECT text_part, html_part FROM sent_messages').all()).toEqual([{ text_part: null, html_part: null }]);
    } finally {
      db.close();
    }
  });

  it('keeps the same bytes as the .eml file when no SMTP server is configured', async () => {
    relay = await startTestRelay({});
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 78 }) }));
    const kept = await waitUntil(async () => (await relay.relay.store.listSentMessages(res.json.id))[0], 10_000, 'the kept copy');
    const file = /written to (.*)$/.exec(kept.response)![1];
    expect(fs.readFileSync(file).equals(kept.raw)).toBe(true);
  });
});

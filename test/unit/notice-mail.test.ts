import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createNoticeComposer, verifyRouteTemplates } from '../../src/compose';
import { loadConfig } from '../../src/config';
import { defaultTemplatesDir, loadRenderer, TemplateError, type Renderer } from '../../src/mail';
import { buildJobDelivery, type DeliveryRecord, type InternalJob } from '../../src/store';

/**
 * The watchdog's and the catch-up's notices are the template set `notice/`: the shipped set, a user's copy of it,
 * and a TEMPLATES_DIR copied before it existed (which mails them with the shipped set).
 */
const HOUR_MS = 3_600_000;
const T0 = Date.parse('2026-03-01T08:00:00Z');
const config = loadConfig(
  { MAIL_TO: 'netops@contoso.example', MAIL_FROM: 'relay@contoso.example', DATA_DIR: '/srv/relay' },
  { readFile: () => '', cwd: '/srv' },
);

const overdue: InternalJob = {
  kind: 'watchdog',
  alert: { kind: 'overdue', source: 'lab', silentSince: T0, expectEveryMs: 24 * HOUR_MS, detectedAt: T0 + 30 * HOUR_MS },
};
const missed: InternalJob = {
  kind: 'missed',
  notice: {
    kind: 'missed',
    detectedAt: T0,
    mailed: 1,
    skipped: [{ id: 12, created: '2026-02-28T10:00:00Z', link: 'https://netbox.example.com/r/12/?a=1&b=2' }],
    deleted: [3, 4, 5],
  },
};

async function mailOf(renderer: Renderer, job: InternalJob) {
  const compose = createNoticeComposer({
    renderer,
    from: 'relay@contoso.example',
    recipients: { to: ['netops@contoso.example'], cc: [], bcc: [] },
    timezone: 'UTC',
    clock: { now: () => T0 + 31 * HOUR_MS },
  });
  const { message } = await compose({ ...buildJobDelivery(job), id: 7 } as DeliveryRecord);
  return message;
}

function copyTemplates(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notice-tpl-'));
  fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
  return dir;
}

const shipped = loadRenderer();

describe('the notice template set', () => {
  it('writes each line as a paragraph, a blank line as <br>, and links the URL a line ends with', async () => {
    const mail = await mailOf(shipped, missed);
    expect(mail.subject).toBe('5 compliance reports missed while the relay was not told');
    expect(mail.html).toBe(
      '<!DOCTYPE html><html><body style="font-family: sans-serif; font-size: 14px; color: #222">' +
        '<p style="margin: 0 0 6px">The relay found 5 compliance reports in NetBox whose webhook never reached it. 1 of them is mailed one by one (the newest), each marked as fetched from NetBox.</p>' +
        '<br><p style="margin: 0 0 6px">Not mailed (older than the ones mailed one by one), still in NetBox:</p>' +
        '<p style="margin: 0 0 6px">- report 12, created 2026-02-28 10:00:00 UTC: <a href="https://netbox.example.com/r/12/?a&#x3D;1&amp;b&#x3D;2">https://netbox.example.com/r/12/?a&#x3D;1&amp;b&#x3D;2</a></p>' +
        '<br><p style="margin: 0 0 6px">No longer in NetBox when the relay asked (validity keeps only its newest reports), so not mailed: report 3–5.</p>' +
        '</body></html>',
    );
    expect(mail.text).toContain('\n- report 12, created 2026-02-28 10:00:00 UTC: https://netbox.example.com/r/12/?a=1&b=2\n\nNo longer');
  });

  it('in a TEMPLATES_DIR copied before it existed: the notices are mailed with the shipped set, and the start is not refused', async () => {
    const dir = copyTemplates();
    fs.rmSync(path.join(dir, 'notice'), { recursive: true });
    const old = loadRenderer(dir);
    await verifyRouteTemplates(old, { ...config, netbox: {} });
    for (const job of [overdue, missed]) {
      const [ours, theirs] = [await mailOf(shipped, job), await mailOf(old, job)];
      expect({ subject: theirs.subject, text: theirs.text, html: theirs.html }).toEqual({
        subject: ours.subject,
        text: ours.text,
        html: ours.html,
      });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("in a user's TEMPLATES_DIR: the user's copy is mailed, and checked at the start against sample notices", async () => {
    const dir = copyTemplates();
    fs.writeFileSync(path.join(dir, 'notice/subject.hbs'), '[{{notice.kind}}] {{notice.defaultSubject}}');
    const own = loadRenderer(dir);
    await verifyRouteTemplates(own, { ...config, netbox: {} });
    expect((await mailOf(own, overdue)).subject).toBe('[overdue] lab: No compliance report received since 2026-03-01 08:00:00 UTC');
    fs.writeFileSync(path.join(dir, 'notice/text.hbs'), '{{notice.sorce}}');
    await expect(verifyRouteTemplates(loadRenderer(dir), { ...config, netbox: {} })).rejects.toThrow(TemplateError);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

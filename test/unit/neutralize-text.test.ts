import fc from 'fast-check';
import { renderDashboardTemplate } from '../../src/dashboard';
import { neutralizeText, neutralizeView } from '../../src/shared';
import { createFailureSummarizer } from '../../src/enrichment';
import { buildEnrichmentView, buildReportView } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';

/** Issue 14, item 4: bidi overrides and control characters from NetBox never reach a reader unseen. */

// eslint-disable-next-line no-control-regex -- the characters the neutraliser must remove are exactly what this looks for
const BIDI_AND_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const renderer = loadRenderer(defaultTemplatesDir());

describe('bidi and control characters from NetBox (issue 14)', () => {
  it('are shown as [U+202E] in the subject, the HTML and the text of a mail', () => {
    const data = {
      ...buildReportData({ id: 31, total_passed: 0, total_count: 1, high_passed: 0, high_count: 1 }),
      display: 'report-\u202egnp.exe',
    };
    const parsed = parseDelivery(buildBody({ version: '4.6', username: 'ad\u2066min\u0007', data }));
    if (parsed.kind !== 'report') throw new Error('not a report');
    const summarizer = createFailureSummarizer();
    summarizer.add([
      { id: 900, passed: false, test: { id: 3, name: 'ntp\u0085servers', severity: 'HIGH' }, device: { id: 10, name: 'sw-\u202egnp.exe' } },
    ]);
    const enrichment = buildEnrichmentView(
      { status: 'ok', summary: summarizer.finish() },
      {
        reportId: 31,
        basePath: '',
        netboxUrl: 'https://netbox.example.com',
        failedResultsUrl: 'https://netbox.example.com/x',
        maxFailures: 50,
        attachment: null,
      },
    );
    const view = buildReportView(parsed, {
      netboxUrl: 'https://netbox.example.com',
      mail: { from: 'relay@example.com', timezone: 'UTC' },
      enrichment,
    });
    const mail = renderer.render(view, 'report', { subject: '{{report.display}}: {{defaultSubject}}' });
    for (const part of [mail.subject, mail.html, mail.text]) expect(part).not.toMatch(BIDI_AND_CONTROLS);
    expect(mail.subject).toContain('report-[U+202E]gnp.exe');
    expect(mail.html).toContain('report-[U+202E]gnp.exe');
    // Device names may break at dots and hyphens (<wbr>), which a reader does not see.
    expect(mail.html.replaceAll('<wbr>', '')).toContain('sw-[U+202E]gnp.exe');
    expect(mail.text).toContain('sw-[U+202E]gnp.exe');
    expect(mail.text).toContain('ntp[U+0085]servers');
    expect(mail.text).toContain('run by ad[U+2066]min[U+0007]');
  });

  it('are made visible on dashboard pages, keeping tabs and line breaks (property)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom('\u202e', '\u2066', '\u2069', '\u0000', '\u001b', '\u0085', '\n', '\r', '\t'),
            fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
          ),
          maxLength: 40,
        }),
        (s) => {
          const shown = renderDashboardTemplate('not-expired', { text: s });
          expect(shown).not.toMatch(BIDI_AND_CONTROLS);
          expect(shown.split('\n').length).toBe(s.split('\n').length);
        },
      ),
      { numRuns: 2000, seed: 4 },
    );
    expect(renderDashboardTemplate('not-expired', { text: '\u202egnp.exe\t<b>' })).toContain('>[U+202E]gnp.exe\t&lt;b&gt;<');
  });

  it('include the bidi marks U+200E, U+200F, U+061C and the other invisible format characters, but not the joiners', () => {
    const marks = ['\u200e', '\u200f', '\u061c', '\u200b', '\u2060', '\u2064', '\ufeff', '\u00ad', '\u{e0041}'];
    for (const c of marks) {
      const code = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      expect(neutralizeText(`sw${c}-1`)).toBe(`sw[U+${code}]-1`);
    }
    // Every Bidi_Control character, by Unicode's own property: none reaches a reader unseen.
    for (let cp = 0; cp <= 0x10ffff; cp += 1) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (/\p{Bidi_Control}/u.test(c)) expect(neutralizeText(c)).toMatch(/^\[U\+[0-9A-F]{4,6}\]$/);
    }
    for (const s of ['\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645', '\u{1f469}\u200d\u{1f4bb}']) expect(neutralizeText(s)).toBe(s);
  });

  it('leave ordinary text, including right-to-left scripts, as it is', () => {
    for (const s of ['sw-core-1', 'Ünïcödé — ok', 'מתג-ליבה', 'line 1\nline 2\ttab']) expect(neutralizeText(s)).toBe(s);
  });

  it('are made visible in every string and key of a view before any template sees it, the view itself left as it was', () => {
    const view = { report: { display: 'r\u202e1', id: 7, ok: true, none: null }, rows: [['sw\u2066', 3]], byName: { 'sw\u0007': 'x' } };
    const before = structuredClone(view);
    expect(neutralizeView(view)).toEqual({
      report: { display: 'r[U+202E]1', id: 7, ok: true, none: null },
      rows: [['sw[U+2066]', 3]],
      byName: { 'sw[U+0007]': 'x' },
    });
    expect(view).toEqual(before);
  });
});

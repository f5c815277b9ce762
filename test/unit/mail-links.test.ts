import fc from 'fast-check';
import { createFailureSummarizer } from '../../src/enrichment';
import { buildEnrichmentView, buildReportView } from '../../src/compose';
import { buildLinks, findNetboxBasePath } from '../../src/report';
import { defaultTemplatesDir, loadRenderer, type RenderedMail } from '../../src/mail';
import { parseDelivery } from '../../src/webhook';
import { hrefsOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';

/** Issue 14, item 3: every link in a mail is http(s) on NETBOX_URL's origin, whatever the webhook says. */

const renderer = loadRenderer(defaultTemplatesDir());
const NETBOX_URL = 'https://netbox.example.com/netbox';

/** Renders a report whose `url`/`results_url` are the given strings, with failing tests listed. */
function renderWith(url: string, resultsUrl: string, netboxUrl: string | undefined): RenderedMail | undefined {
  const data = {
    ...buildReportData({ id: 29, total_passed: 1, total_count: 3, middle_passed: 1, middle_count: 3 }),
    url,
    results_url: resultsUrl,
  };
  let parsed;
  try {
    parsed = parseDelivery(buildBody({ version: '4.6', data }));
  } catch {
    return undefined; // refused at the door: never mailed
  }
  if (parsed.kind !== 'report') return undefined;
  const links = buildLinks(29, url, resultsUrl, netboxUrl);
  const summarizer = createFailureSummarizer();
  summarizer.add([
    { id: 900, passed: false, test: { id: 3, name: 'ntp-servers', severity: 'MIDDLE' }, device: { id: 10, name: 'sw-core-1' } },
    { id: 901, passed: false, test: { id: 3, name: 'ntp-servers', severity: 'MIDDLE' }, device: { id: 11, name: 'sw-core-2' } },
  ]);
  const enrichment = buildEnrichmentView(
    { status: 'ok', summary: summarizer.finish() },
    {
      reportId: 29,
      basePath: findNetboxBasePath(url),
      netboxUrl,
      failedResultsUrl: links.failedResults,
      maxFailures: 50,
      attachment: null,
    },
  );
  return renderer.render(buildReportView(parsed, { netboxUrl, mail: { from: 'relay@example.com', timezone: 'UTC' }, enrichment }));
}

/** Every URL a client could follow from the text part (clients link `scheme:` and `www.` text). */
function urlsInText(text: string): string[] {
  return [...text.matchAll(/[a-z][a-z0-9+.-]*:[^\s]+/gi)].map((m) => m[0]);
}

const forged = fc.oneof(
  fc.constantFrom(
    'javascript:alert(1)',
    'JaVaScRiPt:alert(document.domain)',
    'https://evil.example/api/plugins/validity/test-results/?report_id=29',
    '@evil.example/api/plugins/validity/test-results/?report_id=29',
    'https://netbox.example.com@evil.example/api/',
    '//evil.example/api/plugins/validity/reports/29/',
    '/\\evil.example/api/',
    'data:text/html,<script>alert(1)</script>',
    '/netbox/api/plugins/validity/reports/29/',
  ),
  fc.string({ maxLength: 40 }),
  fc.webUrl(),
);

describe('links in a mail (issue 14)', () => {
  it("are https on NETBOX_URL's origin for a results_url of javascript:, another host, or NETBOX_URL@attacker", () => {
    for (const resultsUrl of [
      'javascript:alert(1)',
      'https://evil.example/x',
      '@evil.example/api/plugins/validity/test-results/?report_id=29',
    ]) {
      const mail = renderWith('/netbox/api/plugins/validity/reports/29/', resultsUrl, NETBOX_URL)!;
      const hrefs = hrefsOf(mail.html);
      expect(hrefs.length).toBeGreaterThan(5);
      for (const href of hrefs) expect(new URL(href).origin).toBe('https://netbox.example.com');
      // The results API link is the one NetBox would have sent.
      expect(hrefs).toContain('https://netbox.example.com/netbox/api/plugins/validity/test-results/?report_id=29');
      expect(mail.text).not.toMatch(/javascript:|evil\.example/);
    }
  });

  it("are http(s) on NETBOX_URL's origin for any url and results_url (property)", () => {
    fc.assert(
      fc.property(forged, forged, (url, resultsUrl) => {
        const mail = renderWith(url, resultsUrl, NETBOX_URL);
        if (!mail) return;
        for (const href of hrefsOf(mail.html)) {
          const target = new URL(href);
          expect(target.origin).toBe('https://netbox.example.com');
          expect(target.username).toBe('');
        }
        for (const link of urlsInText(mail.text)) expect(link.startsWith('https://netbox.example.com/')).toBe(true);
      }),
      { numRuns: 400, seed: 3 },
    );
  });

  it('are not links at all without NETBOX_URL: NetBox paths are shown as text (property)', () => {
    fc.assert(
      fc.property(forged, forged, (url, resultsUrl) => {
        const mail = renderWith(url, resultsUrl, undefined);
        if (!mail) return;
        expect(hrefsOf(mail.html)).toEqual([]);
        // <wbr> marks where a long path may break; the path is all there.
        expect(mail.html.replace(/<wbr>/g, '')).toContain('/plugins/validity/reports/29/');
        expect(urlsInText(mail.text)).toEqual([]);
      }),
      { numRuns: 400, seed: 4 },
    );
  });
});

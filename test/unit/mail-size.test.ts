import { buildEnrichmentView, buildReportView, MAIL_HTML_MAX_BYTES, renderWithinBudget } from '../../src/compose';
import { createFailureSummarizer } from '../../src/enrichment';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseDelivery } from '../../src/webhook';
import { textOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';

const renderer = loadRenderer(defaultTemplatesDir());
const NETBOX = 'https://netbox.example.com';

/** A report with 5,000 failing results: 2,500 tests with long names, two devices each, long FQDNs. */
function buildLargeReportView(maxFailures: number) {
  const summarizer = createFailureSummarizer();
  summarizer.add(
    Array.from({ length: 5000 }, (_, i) => {
      const test = Math.floor(i / 2);
      const severity = test % 3 === 0 ? 'HIGH' : test % 3 === 1 ? 'MIDDLE' : 'LOW';
      return {
        id: 100_000 + i,
        passed: false,
        test: { id: test, name: `interface-description-matches-the-cabling-plan-${test}`, severity },
        device: { id: i, name: `access-switch-${String(i).padStart(5, '0')}.rack-${i % 40}.dc1.region-west.example.net` },
      };
    }),
  );
  const enrichment = buildEnrichmentView(
    { status: 'ok', summary: summarizer.finish() },
    { reportId: 900, basePath: '', netboxUrl: NETBOX, failedResultsUrl: `${NETBOX}/failed`, maxFailures, attachment: null },
  );
  const data = buildReportData({
    id: 900,
    device_count: 5000,
    test_count: 2500,
    total_passed: 5000,
    total_count: 10000,
    high_passed: 1666,
    high_count: 3334,
    middle_passed: 1667,
    middle_count: 3333,
    low_passed: 1667,
    low_count: 3333,
  });
  const delivery = parseDelivery(buildBody({ data }));
  if (delivery.kind !== 'report') throw new Error('not a report');
  return buildReportView(delivery, { netboxUrl: NETBOX, mail: { from: 'relay@example.com', timezone: 'UTC' }, enrichment });
}

describe('a report with 5,000 failing results', () => {
  it.each([50, 10_000])("keeps its HTML under Gmail's clipping size, %i tests listed, and points to the rest", (maxFailures) => {
    const view = buildLargeReportView(maxFailures);
    const rendered = renderWithinBudget(view, (v) => renderer.render(v));
    expect(Buffer.byteLength(rendered.html)).toBeLessThan(MAIL_HTML_MAX_BYTES);
    const text = textOf(rendered.html.replace(/<wbr>/g, ''));
    expect(text).toMatch(/What failed: 5000 failing results in 2500 tests/);
    expect(text).toMatch(/and \d+ more failing tests in NetBox/);
    // The end of the mail (the footer) is inside what Gmail shows.
    expect(text).toContain('Sent by compliance-relay');
  });

  it('renders a mail within the budget once, as it is', () => {
    const view = buildLargeReportView(10);
    let renders = 0;
    const rendered = renderWithinBudget(view, (v) => (renders++, renderer.render(v)));
    expect(renders).toBe(1);
    expect(rendered.html).toBe(renderer.render(view).html);
  });
});

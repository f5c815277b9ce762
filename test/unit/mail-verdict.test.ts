import { buildEnrichmentView, buildFilterHeaders, buildReportView, buildTrendView, type ReportView } from '../../src/compose';
import { createFailureSummarizer } from '../../src/enrichment';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { buildTrend, type FailingPair } from '../../src/trend';
import { textOf } from '../helpers/html';
import { createReportSeries, type SeriesStep } from '../helpers/report-series';

const renderer = loadRenderer(defaultTemplatesDir());

/** One report of a series: 10 results per severity on 10 devices, `failing` the pairs that failed. */
type Step = SeriesStep;

const high = (device: string): FailingPair => ({ device, test: 'ntp-servers', severity: 'HIGH' });
const middle = (device: string): FailingPair => ({ device, test: 'snmp-community', severity: 'MIDDLE' });
const low = (device: string): FailingPair => ({ device, test: 'banner-motd', severity: 'LOW' });

// A NetBox getting worse, then mixed (HIGH worse, the rest better), then better, then the same.
const SERIES: Step[] = [
  { id: 200, failing: [middle('sw1'), middle('sw2'), low('sw1')] },
  { id: 201, failing: [high('sw1'), middle('sw1'), middle('sw2'), low('sw1')] },
  { id: 202, failing: [high('sw1'), high('sw2')] },
  { id: 203, failing: [] },
  { id: 204, failing: [] },
];

const { countsOf, snapshotOf, deliveryOf } = createReportSeries({
  resultsPerSeverity: 10,
  deviceCount: 10,
  createdOf: (id) => new Date(Date.UTC(2026, 2, 1, 10) + (id - 200) * 3_600_000).toISOString(),
});

/** The view of each report of the series, each compared with the one before it. */
function buildSeriesViews(): ReportView[] {
  return SERIES.map((step, i) => {
    const history = SERIES.slice(0, i).reverse().map(snapshotOf);
    const c = countsOf(step.failing);
    const trend = buildTrendView(buildTrend(snapshotOf(step), history), {
      timezone: 'UTC',
      basePath: '',
      netboxUrl: 'https://netbox.example.com',
      currentFailingKnown: true,
      passed: c.overall.passed,
      count: c.overall.count,
    });
    return buildReportView(deliveryOf(step), {
      netboxUrl: 'https://netbox.example.com',
      mail: { from: 'relay@example.com', timezone: 'UTC' },
      trend,
      sourceName: 'prod',
    });
  });
}

describe('the mail reads one verdict', () => {
  const views = buildSeriesViews();

  it('puts the verdict, the percentage and the HIGH count first in the subject, the report and instance last', () => {
    expect(views.map((v) => v.defaultSubject)).toEqual([
      'First: 90.0%, 3 failing, no HIGH \u2014 report 200 \u00b7 prod',
      'Worse: 86.7% (\u22123.3), 1 HIGH failing \u2014 report 201 \u00b7 prod',
      'Mixed: 93.3% (+6.6), 2 HIGH failing \u2014 report 202 \u00b7 prod',
      'Better: 100.0% (+6.7), all passed \u2014 report 203 \u00b7 prod',
      'Same: 100.0% (\u00b10.0), all passed \u2014 report 204 \u00b7 prod',
    ]);
    for (const view of views.filter((v) => v.highFailed > 0)) {
      // What a phone's inbox shows: the verdict and the HIGH count are both in it.
      expect(view.defaultSubject.slice(0, 40)).toMatch(/^(Worse|Mixed|First): .* \d+ HIGH failing/);
    }
  });

  it('never calls a report with more HIGH failures better, even when the overall percentage rose', () => {
    const mixed = views[2];
    expect(mixed.overall.percent).toBeGreaterThan(views[1].overall.percent!);
    expect(mixed.verdict?.direction).toBe('mixed');
    expect(mixed.verdict?.text).toBe(
      'Mixed against report 201: 93.3% passed, was 86.7% (+6.6 pts, \u22122 failing); HIGH 80.0%, was 90.0%, 1 newly failing.',
    );
  });

  it('gives the header, the first line and the Overall colour the same verdict', () => {
    const lines = views.map((view) => {
      const rendered = renderer.render(view);
      const firstLines = rendered.text.split('\n').slice(0, 3).join(' ');
      return [
        buildFilterHeaders(view, 'default')['X-Compliance-Verdict'],
        view.overall.tone,
        /^(\S+)/.exec(view.verdict!.text)![1],
        firstLines.includes(view.verdict!.text),
      ];
    });
    expect(lines).toEqual([
      ['first', 'none', '90.0%', true],
      ['worse', 'high', 'Worse', true],
      ['mixed', 'middle', 'Mixed', true],
      ['better', 'ok', 'Better', true],
      ['same', 'ok', 'Same', true],
    ]);
  });

  it('paints the verdict line in its colour in the HTML, and says so once', () => {
    const html = renderer.render(views[2]).html;
    expect(html).toMatch(/<p class="verdict verdict-mixed" style="[^"]*color: #c2410c/);
    expect(textOf(html).match(/Mixed against report 201/g)).toHaveLength(1);
  });

  it('says when the compared reports cover different results', () => {
    const before = snapshotOf(SERIES[0]);
    const grown = {
      ...snapshotOf(SERIES[1]),
      counts: { ...countsOf([]), overall: { passed: 40, count: 40 }, LOW: { passed: 20, count: 20 } },
    };
    const trend = buildTrendView(buildTrend(grown, [before]), {
      timezone: 'UTC',
      basePath: '',
      currentFailingKnown: true,
      passed: 40,
      count: 40,
    });
    expect(trend.verdict.scopeChanged).toBe(true);
    expect(trend.verdict.scopeText).toBe(
      'The scope changed: report 200 had 30 results, this one 40, so the percentages compare different tests or devices.',
    );
  });
});

describe('a relay without NETBOX_URL', () => {
  it('says once, in small print, which setting would add the details', () => {
    const step = SERIES[1];
    const c = countsOf(step.failing);
    const unknown = (s: Step) => ({ ...snapshotOf(s), failing: null });
    const trend = buildTrendView(buildTrend(unknown(step), [unknown(SERIES[0])]), {
      timezone: 'UTC',
      basePath: '',
      currentFailingKnown: false,
      passed: c.overall.passed,
      count: c.overall.count,
    });
    const enrichment = buildEnrichmentView(
      {
        status: 'missing',
        code: 'NO_NETBOX_URL',
        reason: 'Failing tests are not listed: set NETBOX_URL and NETBOX_TOKEN on the relay to see them here.',
      },
      { reportId: step.id, basePath: '', failedResultsUrl: '/x', maxFailures: 10, attachment: null },
    );
    const rendered = renderer.render(
      buildReportView(deliveryOf(step), { mail: { from: 'relay@example.com', timezone: 'UTC' }, trend, enrichment }),
    );
    for (const part of [rendered.text, textOf(rendered.html)]) {
      expect(part.match(/NETBOX_URL/g)).toHaveLength(1);
      expect(part).not.toMatch(/could not be read/);
    }
    expect(rendered.html).toMatch(/<p class="note"[^>]*>Set NETBOX_URL \(and NETBOX_TOKEN\)/);
  });
});

describe('a report with 5 failing results', () => {
  // Two tests; three results failed before (one of them is fixed now), three are new.
  const ntp = (device: string): FailingPair => ({ device, test: 'ntp-servers', severity: 'HIGH' });
  const snmp = (device: string): FailingPair => ({ device, test: 'snmp-community', severity: 'MIDDLE' });
  const before: Step = {
    id: 301,
    failing: [ntp('core-1.fra1.example.net'), ntp('core-2.fra1.example.net'), snmp('edge-9.ams1.example.net')],
  };
  const now: Step = {
    id: 302,
    failing: [
      ntp('core-1.fra1.example.net'),
      ntp('core-2.fra1.example.net'),
      ntp('edge-1.fra1.example.net'),
      snmp('edge-1.ams1.example.net'),
      snmp('edge-2.ams1.example.net'),
    ],
  };

  function render() {
    const trend = buildTrend(snapshotOf(now), [snapshotOf(before)]);
    const summarizer = createFailureSummarizer();
    summarizer.add(
      now.failing.map((p, i) => ({
        id: 5000 + i,
        passed: false,
        test: { id: p.test === 'ntp-servers' ? 1 : 2, name: p.test, severity: p.severity },
        device: { id: 100 + i, name: p.device },
      })),
    );
    const netboxUrl = 'https://netbox.example.com';
    const enrichment = buildEnrichmentView(
      { status: 'ok', summary: summarizer.finish() },
      { reportId: now.id, basePath: '', netboxUrl, failedResultsUrl: `${netboxUrl}/x`, maxFailures: 10, attachment: null, trend },
    );
    const c = countsOf(now.failing);
    const trendView = buildTrendView(trend, {
      timezone: 'UTC',
      basePath: '',
      netboxUrl,
      currentFailingKnown: true,
      passed: c.overall.passed,
      count: c.overall.count,
    });
    return renderer.render(
      buildReportView(deliveryOf(now), { netboxUrl, mail: { from: 'relay@example.com', timezone: 'UTC' }, trend: trendView, enrichment }),
    );
  }

  it('lists each failing (device, test) once, in the text and the HTML, tagged new or with its streak', () => {
    const { text, html } = render();
    // <wbr> is a break opportunity, not a space.
    for (const part of [text, textOf(html.replace(/<wbr>/g, ''))]) {
      for (const pair of now.failing) expect(part.split(pair.device)).toHaveLength(2);
      expect(part).toMatch(/new:?\s+edge-1\.fra1\.example\.net/);
      expect(part).toMatch(/failing since report 301 \(2 in a row\):?\s+core-1\.fra1\.example\.net/);
      // The fixed result, once, in the compact list.
      expect(part.split('edge-9.ams1.example.net')).toHaveLength(2);
    }
    expect(text).toContain('Newly failing: [HIGH] ntp-servers (1 device); [MIDDLE] snmp-community (2 devices)\n');
  });
});

describe('a report with more newly failing HIGH tests than the mail lists', () => {
  it('counts the devices of every newly failing HIGH test in the verdict line, not only the listed ones', () => {
    const wide = createReportSeries({
      resultsPerSeverity: 50,
      deviceCount: 50,
      createdOf: (id) => new Date(Date.UTC(2026, 2, 1, 10) + (id - 300) * 3_600_000).toISOString(),
    });
    // 25 HIGH tests newly failing, each on its own two devices: 50 devices in all, past the 20 tests listed.
    const failing = Array.from({ length: 25 }, (_, i) =>
      [`sw${2 * i}`, `sw${2 * i + 1}`].map((device): FailingPair => ({ device, test: `high-test-${i}`, severity: 'HIGH' })),
    ).flat();
    const before = wide.snapshotOf({ id: 300, failing: [] });
    const now = { id: 301, failing };
    const c = wide.countsOf(failing);
    const view = buildTrendView(buildTrend(wide.snapshotOf(now), [before]), {
      timezone: 'UTC',
      basePath: '',
      currentFailingKnown: true,
      passed: c.overall.passed,
      count: c.overall.count,
    });
    expect(view.newlyFailingTests).toHaveLength(20);
    expect(view.moreNewlyFailingTests).toBe(5);
    expect(view.verdict.text).toMatch(/; HIGH 0\.0%, was 100\.0%, 50 newly failing\.$/);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import {
  buildDigestView,
  buildEnrichmentView,
  buildOwnerGroupView,
  buildReportView,
  buildTrendView,
  sampleDigestContents,
  toChartPoint,
  type ReportView,
} from '../../src/compose';
import { createFailureSummarizer, type Enrichment } from '../../src/enrichment';
import { buildTrendChart, loadRenderer } from '../../src/mail';
import { buildTrend, type FailingPair, type Trend } from '../../src/trend';
import type { ReportDelivery } from '../../src/webhook';
import { launchChromium } from '../helpers/browser';
import { createReportSeries } from '../helpers/report-series';

const OUT = path.join(__dirname, '..', '..', 'test-output', 'mail-series');
const NETBOX = 'https://netbox.example.com';
const renderer = loadRenderer();

const pair = (test: string, severity: FailingPair['severity'], device: string): FailingPair => ({ test, severity, device });
const ntp = (d: string) => pair('ntp-servers-match-the-site-standard', 'HIGH', d);
const snmp = (d: string) => pair('snmp-community-is-not-public', 'MIDDLE', d);
const banner = (d: string) => pair('login-banner', 'LOW', d);
const dev = (n: number) => `leaf-${String(n).padStart(2, '0')}.fra1.dc.example-corp.net`;

/** A NetBox getting worse, then mixed (HIGH worse, the rest better), then better, then the same: 12 results per severity. */
const SERIES: { id: number; failing: FailingPair[] }[] = [
  { id: 201, failing: [ntp(dev(1)), snmp(dev(1)), snmp(dev(2)), banner(dev(3))] },
  { id: 202, failing: [ntp(dev(1)), ntp(dev(2)), ntp(dev(3)), snmp(dev(1)), snmp(dev(2)), banner(dev(3)), banner(dev(4))] },
  { id: 203, failing: [ntp(dev(1)), ntp(dev(2)), ntp(dev(3)), ntp(dev(4)), snmp(dev(1))] },
  { id: 204, failing: [ntp(dev(1)), snmp(dev(1))] },
  { id: 205, failing: [ntp(dev(1)), snmp(dev(1))] },
];

const { countsOf, snapshotOf, deliveryOf } = createReportSeries({
  resultsPerSeverity: 12,
  deviceCount: 12,
  createdOf: (id) => new Date(Date.UTC(2026, 2, 1, 6) + (id - 201) * 86_400_000).toISOString(),
});

/** The failing results of report `step` as NetBox lists them (leaf-NN's device id is 99 + NN). */
function readFailures(step: (typeof SERIES)[number]): Enrichment {
  const summarizer = createFailureSummarizer();
  summarizer.add(
    step.failing.map((p, k) => ({
      id: 9000 + k,
      passed: false,
      test: { id: p.test.length, name: p.test, severity: p.severity },
      device: { id: 99 + Number(/leaf-(\d+)/.exec(p.device)![1]), name: p.device },
    })),
  );
  return { status: 'ok', summary: summarizer.finish() };
}

/** How report `step`'s failing-tests section is built, tagged from `trend`. */
function sectionOptions(step: (typeof SERIES)[number], trend: Trend) {
  const where = { reportId: step.id, basePath: '', netboxUrl: NETBOX, failedResultsUrl: `${NETBOX}/failed` };
  return { ...where, maxFailures: 50, trend, attachCsv: false, attachMaxBytes: 0 };
}

/** The failing-tests section of report `step`, tagged from `trend`. */
function buildFailures(step: (typeof SERIES)[number], trend: Trend) {
  return buildEnrichmentView(readFailures(step), { ...sectionOptions(step, trend), attachment: null });
}

/** Report i of the series as the relay mails it: failures from NetBox, the trend, the chart (inline as data:). */
function buildMail(i: number): { view: ReportView; delivery: ReportDelivery; html: string } {
  const step = SERIES[i];
  const history = SERIES.slice(0, i).reverse().map(snapshotOf);
  const trend = buildTrend(snapshotOf(step), history);
  const enrichment = buildFailures(step, trend);
  const c = countsOf(step.failing);
  const trendView = buildTrendView(trend, {
    timezone: 'Europe/Berlin',
    basePath: '',
    netboxUrl: NETBOX,
    currentFailingKnown: true,
    passed: c.overall.passed,
    count: c.overall.count,
  });
  const points = [...history.reverse(), snapshotOf(step)].map(toChartPoint);
  const chart = points.length > 1 ? buildTrendChart(points) : null;
  const delivery = deliveryOf(step);
  const view = buildReportView(delivery, {
    netboxUrl: NETBOX,
    mail: { from: 'relay@example.com', timezone: 'Europe/Berlin' },
    enrichment,
    trend: trendView,
    sourceName: 'prod',
    chart: chart ? { ...chart, currentText: '', currentLabel: 'this report' } : null,
  });
  const html = renderer.render(view).html;
  return { view, delivery, html };
}

/** Every element reaching past the viewport's right edge (nothing in the mail clips). */
const FIND_OVERFLOW = `(() => {
  const client = document.documentElement.clientWidth;
  const wide = [...document.body.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > client + 0.5).map((e) => e.tagName + '.' + (e.getAttribute('class') || ''));
  return { scroll: document.documentElement.scrollWidth, client, wide };
})()`;

describe('a series of report mails, a digest and an owner mail in a real browser', () => {
  let browser: Browser;
  const mails: [string, string][] = [];

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    const verdicts = ['first', 'worse', 'mixed', 'better', 'same'];
    SERIES.forEach((step, i) => mails.push([`report-${step.id}-${verdicts[i]}`, buildMail(i).html]));
    mails.push(['digest', renderer.render(buildDigestView(sampleDigestContents('Europe/Berlin')[0]), 'digest').html]);
    const { view, delivery } = buildMail(2);
    // fra1's share of report 203 against report 202: its MIDDLE result on leaf-02 fixed, so its own verdict is "better".
    const history = SERIES.slice(0, 2).reverse().map(snapshotOf);
    const trend = buildTrend(snapshotOf(SERIES[2]), history);
    const recorded = { trend, current: snapshotOf(SERIES[2]), history, options: {} };
    const insights = { kept: readFailures(SERIES[2]), recorded, chart: null, waivers: null };
    const group = {
      route: 'owners',
      key: 'o-fra1',
      to: ['fra1-netops@example.com'],
      why: 'you are the primary owner contact of site fra1',
      deviceIds: [100, 101],
      devices: [dev(1), dev(2)],
      counts: { HIGH: { passed: 4, count: 6 }, MIDDLE: { passed: 6, count: 6 }, LOW: { passed: 6, count: 6 } },
      ownedDevices: 6,
      whole: false,
      note: null,
    };
    const where = { netboxUrl: NETBOX, mail: { from: 'relay@example.com', timezone: 'Europe/Berlin' }, sourceName: 'prod' };
    const owner = buildOwnerGroupView({ view, attachments: [] }, delivery, insights, group, {
      ...where,
      ...sectionOptions(SERIES[2], trend),
    });
    expect(owner.view.verdict?.direction).toBe('better');
    mails.push(['owner-fra1', renderer.render(owner.view).html]);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('reads one verdict per report: worse, mixed, better, same', () => {
    expect(SERIES.map((_, i) => buildMail(i).view.verdict?.direction)).toEqual(['first', 'worse', 'mixed', 'better', 'same']);
  });

  it.each([375, 1024])('at %i px, light and dark: screenshots kept, nothing scrolls sideways', async (width) => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
      try {
        const page = await context.newPage();
        await page.route('**/*', (route) => route.abort());
        for (const [name, html] of mails) {
          await page.setContent(html, { waitUntil: 'load' });
          await page.screenshot({ path: path.join(OUT, `${name}-${width}px-${scheme}.png`), fullPage: true });
          const found = await page.evaluate<{ scroll: number; client: number; wide: string[] }>(FIND_OVERFLOW);
          expect({ name, scheme, wide: found.wide }).toEqual({ name, scheme, wide: [] });
          expect(found.scroll).toBeLessThanOrEqual(found.client);
        }
      } finally {
        await context.close();
      }
    }
  });

  // Gmail's apps drop overflow-wrap and word-break: the mails must not need them. Removed here from any
  // inline style or rule that might still carry them, every mail stays within a phone's width.
  it('at 375 px with overflow-wrap and word-break removed, as Gmail shows it, nothing scrolls sideways', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 900 } });
    try {
      const page = await context.newPage();
      await page.route('**/*', (route) => route.abort());
      for (const [name, html] of mails) {
        await page.setContent(html.replace(/(overflow-wrap|word-break)\s*:[^;"}]*;?/g, ''), { waitUntil: 'load' });
        const found = await page.evaluate<{ scroll: number; client: number; wide: string[] }>(FIND_OVERFLOW);
        expect({ name, wide: found.wide, scroll: found.scroll <= found.client }).toEqual({ name, wide: [], scroll: true });
      }
    } finally {
      await context.close();
    }
  });
});

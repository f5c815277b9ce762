import { buildMailChart, toChartPoint, type ReportInsights } from './create-report-insights';
import type { Config, SourceConfig } from '../config';
import { TemplateError, type Renderer } from '../mail';
import { createFailureSummarizer } from '../enrichment';
import {
  buildPeriodTrend,
  buildReportSnapshot,
  buildTrend,
  pairKey,
  type FailingPair,
  type PairStates,
  type RecordedTrend,
  type ReportSnapshot,
} from '../trend';
import { parseDelivery, type ReportDelivery } from '../webhook';
import { buildMailView, buildReportView, type ReportView, type ReportViewOptions } from './build-report-view';
import { applyWaivers, buildWaiverEnd, type Waiver, type WaiverOutcome } from '../waivers';
import { buildDigestView, DIGEST_TEMPLATE_SET, type DigestContent } from './build-digest-view';
import path from 'node:path';
import type { Route } from '../routing';

/** What the sample mails need: the mail settings, and the default source's NetBox for their links. */
export type SampleSettings = { mail: ReportViewOptions['mail']; netbox: Pick<SourceConfig['netbox'], 'url'> };

/**
 * The delivery recorded in validity's documentation (NetBox ≤ 3.6 era): report 29, 5 of 8 MIDDLE
 * results passed. Used to check templates at boot and by `send-test`; examples/ has it as raw bytes.
 */
export const SAMPLE_ENVELOPE = {
  event: 'created',
  timestamp: '2023-04-12 19:36:37.739906+00:00',
  model: 'compliancereport',
  username: 'admin',
  request_id: 'fc577b60-3f63-4402-8661-547adfefdd87',
  data: {
    id: 29,
    url: '/api/plugins/validity/reports/29/',
    display: 'report-29',
    device_count: 3,
    test_count: 3,
    total_passed: 5,
    total_count: 8,
    low_passed: 0,
    low_count: 0,
    middle_passed: 5,
    middle_count: 8,
    high_passed: 0,
    high_count: 0,
    results_url: '/api/plugins/validity/test-results/?report_id=29',
    custom_fields: {},
    created: '2023-04-12T19:36:33.690567Z',
    last_updated: '2023-04-12T19:36:33.690588Z',
  },
  snapshots: {
    prechange: null,
    postchange: { created: '2023-04-12T19:36:33.690Z', last_updated: '2023-04-12T19:36:33.690Z', custom_fields: {} },
  },
} as const;

function sampleDelivery(): ReportDelivery {
  const parsed = parseDelivery(Buffer.from(JSON.stringify(SAMPLE_ENVELOPE)));
  if (parsed.kind !== 'report') throw new Error('the built-in sample is not a report');
  return parsed;
}

export function sampleDeliveryView(config: SampleSettings): ReportView {
  return buildReportView(sampleDelivery(), { netboxUrl: config.netbox.url, mail: config.mail });
}

/** Accepted exceptions as the sample mail lists them: one ending within the week, one on all devices hiding a HIGH failure on two. */
function applySampleWaivers(now: number): WaiverOutcome<FailingPair> {
  const waiver = (
    id: string,
    origin: Waiver['origin'],
    test: string,
    device: string | null,
    until: string,
    author: string,
    reason: string,
  ) => {
    const endsAt = buildWaiverEnd(until);
    return { id, origin, test, device, until, endsAt, author, reason, source: 'default', createdAt: 0, expiredAt: null, expiredBy: null };
  };
  const waivers = [
    waiver('file:1', 'file', 'ssh-v2-only', null, '2023-06-30', 'bob', 'Old images until the upgrade'),
    waiver('7', 'store', 'telnet-disabled', 'sw-lab-1', '2023-04-15', 'alice', 'Lab switch, retired soon'),
  ];
  const pairs: FailingPair[] = [
    { device: 'sw-lab-1', test: 'ssh-v2-only', severity: 'HIGH' },
    { device: 'sw-lab-2', test: 'ssh-v2-only', severity: 'HIGH' },
    { device: 'sw-lab-1', test: 'telnet-disabled', severity: 'MIDDLE' },
  ];
  return applyWaivers(pairs, waivers, now);
}

/** The sample CSV's cap: its header and first 2 failing results. */
const SAMPLE_CSV_MAX_BYTES = 300;

/**
 * The sample report as the relay mails it when NetBox answered (failing tests, devices, a CSV note and a trend with a newly
 * failing, a fixed, a not evaluated, an undetermined and a still-failing pair), and one whose details are missing.
 * Rendered at boot so that a template whose enrichment or trend sections are broken stops the start.
 */
export function sampleInsightViews(config: SampleSettings): ReportView[] {
  const delivery = sampleDelivery();
  const summarizer = createFailureSummarizer();
  const test = { id: 3, name: 'ntp-servers', severity: 'MIDDLE' };
  summarizer.add(
    ['sw-core-1', 'sw-core-2', 'sw-edge-1'].map((name, i) => ({ id: 900 + i, passed: false, test, device: { id: 10 + i, name } })),
  );
  summarizer.add([
    { id: 903, passed: false, test: { id: 4, name: 'snmp-community', severity: 'MIDDLE' }, device: { id: 10, name: 'sw-core-1' } },
  ]);
  const summary = summarizer.finish();
  const sample = buildSampleTrends(
    delivery,
    summary.results.map((r) => ({ device: r.device, test: r.test, severity: r.severity })),
  );
  const now = Date.parse(delivery.report.created);
  const enriched: ReportInsights = {
    kept: { status: 'ok', summary },
    failingKnown: true,
    recorded: sample.recorded,
    // The chart of the sample's series, built as a report's is.
    chart: buildMailChart([...sample.recorded.history].reverse().concat(sample.recorded.current).map(toChartPoint), '62.5%', 'this report'),
    waivers: { outcome: applySampleWaivers(now), now },
  };
  const missing: ReportInsights = {
    kept: { status: 'missing', code: 'UNREACHABLE', reason: 'Failing tests are not listed: NetBox could not be reached (ECONNREFUSED).' },
    failingKnown: false,
    recorded: sample.first,
    chart: null,
    waivers: null,
  };
  const options = {
    mail: config.mail,
    netboxUrl: config.netbox.url,
    maxFailures: 1,
    attachCsv: true,
    attachMaxBytes: SAMPLE_CSV_MAX_BYTES,
  };
  return [enriched, missing].map(
    (insights) => buildMailView(delivery, insights, { ...options, relayUrl: 'https://relay.example.com' }).view,
  );
}

/** The sample's trend against two earlier reports, and as the first report of its series. */
function buildSampleTrends(delivery: ReportDelivery, pairs: FailingPair[]): { recorded: RecordedTrend; first: RecordedTrend } {
  const snapshot = (id: number, created: string, failing: FailingPair[]) => ({
    ...buildReportSnapshot(delivery, 'sample|', failing),
    ...identify(id, created),
  });
  const gone = ['sw-edge-2', 'sw-edge-3', 'sw-edge-4'].map((device) => ({ device, test: 'ntp-servers', severity: 'MIDDLE' as const }));
  const previous = snapshot(28, '2023-04-11T19:36:33Z', [...pairs.slice(1), ...gone]);
  const older = snapshot(27, '2023-04-10T19:36:33Z', pairs.slice(1));
  // NetBox's answer on the changed pairs: the first gone one passed (fixed), the second has no result, the third could not be told.
  const states: PairStates = {
    now: new Map([
      [pairKey(gone[0]), true],
      [pairKey(gone[1]), false],
    ]),
    before: new Map([[pairKey(pairs[0]), true]]),
    deletedTests: [],
    deletedDevices: [],
    unknownReason: 'NetBox did not answer within the 30 s allowed',
  };
  const current = snapshot(29, delivery.report.created, pairs);
  const history = [previous, older];
  return {
    recorded: { trend: buildTrend(current, history, { states }), current, history, options: { states } },
    first: { trend: buildTrend(current, []), current, history: [], options: {} },
  };
}

/** A sample report's identity: report `reportId`, created at `created`. */
function identify(reportId: number, created: string): Pick<ReportSnapshot, 'reportId' | 'dedupKey' | 'created' | 'createdMs'> {
  return { reportId, dedupKey: `${reportId}@${created}`, created, createdMs: Date.parse(created) };
}

const HOUR_MS = 3_600_000;
const START_MS = Date.parse('2023-04-10T06:00:00Z');

function sampleReport(reportId: number, hours: number, passed: number, failing: FailingPair[] | null): ReportSnapshot {
  return {
    ...identify(reportId, new Date(START_MS + hours * HOUR_MS).toISOString()),
    series: 'https://netbox.example.com|',
    counts: {
      overall: { passed, count: 40 },
      HIGH: { passed: Math.min(passed, 10) - (failing?.filter((p) => p.severity === 'HIGH').length ? 1 : 0), count: 10 },
      MIDDLE: { passed: 15, count: 15 },
      LOW: { passed: Math.max(0, passed - 25), count: 15 },
    },
    failing,
  };
}

/**
 * Sample digests that reach every branch of a digest template (several reports with newly failing,
 * fixed and worst devices; a silent source; a late period with no report at all), rendered at boot
 * so a broken digest template stops the start, as a broken report template does.
 */
export function sampleDigestContents(timezone: string): DigestContent[] {
  const a: FailingPair = { device: 'sw-core-01', test: 'ntp-servers', severity: 'HIGH' };
  const b: FailingPair = { device: 'sw-edge-07', test: 'banner', severity: 'LOW' };
  const c: FailingPair = { device: 'sw-core-01', test: 'snmp-community', severity: 'MIDDLE' };
  const before = sampleReport(40, -24, 37, [a, b]);
  const period = [sampleReport(41, 0, 36, [a, b, c]), sampleReport(42, 24, 38, [a, c]), sampleReport(43, 48, 38, null)];
  const base = {
    route: 'sample',
    periodStart: START_MS - HOUR_MS,
    periodEnd: START_MS + 7 * 24 * HOUR_MS,
    queuedAt: START_MS + 7 * 24 * HOUR_MS,
    timezone,
  };
  return [
    {
      ...base,
      late: false,
      sources: [{ source: 'default', series: [buildPeriodTrend(period.slice(0, 2), before), buildPeriodTrend([period[2]], undefined)] }],
      silentSources: ['lab'],
    },
    { ...base, late: true, sources: [], silentSources: [] },
  ];
}

/**
 * Renders the sample report with every template set and with every route's set and subject, so a
 * missing set, a syntax error or an unknown variable (templates are strict) fails at boot with the
 * file and line, not at the first delivery. Throws {@link TemplateError}.
 */
export function verifyRouteTemplates(renderer: Renderer, config: SampleSettings & Pick<Config, 'routing'>): void {
  // The plain sample and the samples with enrichment and trend sections filled (every branch of the templates).
  const views = [sampleDeliveryView(config), ...sampleInsightViews(config)];
  const digestViews = sampleDigestContents(config.mail.timezone).map(buildDigestView);
  const onRoute = (name: string) => views.map((view) => ({ ...view, route: { name, reminder: false, reason: 'sample' } }));
  // The digest set renders digests, not reports: it is checked with the sample digests only.
  for (const set of renderer.sets.filter((s) => s !== DIGEST_TEMPLATE_SET))
    for (const view of onRoute('sample')) renderer.render(view, set);
  if (renderer.sets.includes(DIGEST_TEMPLATE_SET)) for (const view of digestViews) renderer.render(view, DIGEST_TEMPLATE_SET);
  for (const route of config.routing.routes) {
    const set = route.digest ? (route.template ?? DIGEST_TEMPLATE_SET) : route.template;
    if (set !== undefined && !renderer.sets.includes(set)) {
      throw new TemplateError(path.join(renderer.dir, set), new Error(describeMissingSet(route, set, renderer.sets)));
    }
    try {
      for (const view of route.digest ? digestViews : onRoute(route.name))
        renderer.render(view, set, route.subject === undefined ? {} : { subject: route.subject });
    } catch (error) {
      if (error instanceof TemplateError && route.subject !== undefined && error.file.startsWith('subject')) {
        throw new TemplateError(`${config.routing.file ?? 'ROUTES_FILE'} route ${route.name} subject`, error.cause);
      }
      throw error;
    }
  }
}

function describeMissingSet(route: Route, set: string, found: readonly string[]): string {
  return route.digest
    ? `digest route ${route.name} needs the template set "${set}" (subject.hbs, html.hbs, text.hbs); copy templates/${DIGEST_TEMPLATE_SET} from the shipped templates into your TEMPLATES_DIR (found: ${found.join(', ')})`
    : `route ${route.name} uses template set "${set}", which is not a folder with subject.hbs, html.hbs and text.hbs (found: ${found.join(', ')})`;
}

import { createReportInsights, type ReportInsights } from './create-report-insights';
import type { Config, SourceConfig } from '../config';
import { TemplateError, type Renderer } from '../mail';
import type { Severity } from '../report';
import { buildPeriodTrend, buildReportSnapshot, pairKey } from '../trend';
import type { FailingPair, PairStates, ReportCursor, ReportSnapshot } from '../trend';
import { parseDelivery, type ReportDelivery } from '../webhook';
import { buildMailView, buildOwnerGroupView, type ReportView, type ReportViewOptions } from './build-report-view';
import type { OwnerGroupPlan } from '../store';
import { buildWaiverEnd, type Waiver } from '../waivers';
import { buildDigestView, DIGEST_TEMPLATE_SET, type DigestContent } from './build-digest-view';
import { buildNoticeView, NOTICE_TEMPLATE_SET, type NoticeJob } from './build-notice-mail';
import fs from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from '../shared';

/** What the sample mails need: the mail settings, and the default source's NetBox for their links. */
export type SampleSettings = { mail: ReportViewOptions['mail']; netbox: Pick<SourceConfig['netbox'], 'url'> };

/** The delivery recorded in validity's documentation (report 29, 5 of 8 MIDDLE results passed), shipped in examples/. */
export function readSampleBody(root = findPackageRoot()): Buffer {
  const file = path.join(root, 'examples', 'delivery-netbox-3.6.json');
  try {
    return fs.readFileSync(file);
  } catch (error) {
    const reason = `the sample report ${file}, part of the relay's package, cannot be read: ${(error as Error).message}`;
    throw new Error(`${reason}; reinstall the relay`, { cause: error });
  }
}

export function readSampleDelivery(): ReportDelivery {
  const parsed = parseDelivery(readSampleBody());
  if (parsed.kind !== 'report') throw new Error('the built-in sample is not a report');
  return parsed;
}

/** The sample's failing results with their ids; its waivers accept three (one ending within the week, one hiding HIGH ones). */
const SAMPLE_FAILURES: FailingPair[] = [
  ...['sw-core-1', 'sw-core-2', 'sw-edge-1'].map((device, i) => sampleFailure(900 + i, device, 10 + i, 'ntp-servers', 3, 'MIDDLE')),
  sampleFailure(903, 'sw-core-1', 10, 'snmp-community', 4, 'MIDDLE'),
  sampleFailure(904, 'sw-lab-1', 20, 'ssh-v2-only', 5, 'HIGH'),
  sampleFailure(905, 'sw-lab-2', 21, 'ssh-v2-only', 5, 'HIGH'),
  sampleFailure(906, 'sw-lab-1', 20, 'telnet-disabled', 6, 'MIDDLE'),
];

/** The ntp-servers failures of report 28 that are gone from the sample. */
const SAMPLE_GONE = ['sw-edge-2', 'sw-edge-3', 'sw-edge-4'].map((device) => ({ device, test: 'ntp-servers', severity: 'MIDDLE' as const }));

/** The first gone pair passed (fixed), the second has no result, the third could not be told. */
const SAMPLE_STATES: PairStates = {
  now: new Map([
    [pairKey(SAMPLE_GONE[0]), true],
    [pairKey(SAMPLE_GONE[1]), false],
  ]),
  before: new Map([[pairKey(SAMPLE_FAILURES[0]), true]]),
  deletedTests: [],
  deletedDevices: [],
  unknownReason: 'NetBox did not answer within the 30 s allowed',
};

function sampleFailure(result: number, device: string, deviceId: number, test: string, testId: number, severity: Severity): FailingPair {
  return { device, test, severity, ids: { result, device: deviceId, test: testId } };
}

function sampleWaiver(id: string, test: string, device: string | null, until: string, author: string, reason: string): Waiver {
  const origin = id.startsWith('file:') ? 'file' : 'store';
  const endsAt = buildWaiverEnd(until);
  return { id, origin, test, device, until, endsAt, author, reason, source: 'default', createdAt: 0, expiredAt: null, expiredBy: null };
}

const SAMPLE_WAIVERS = [
  sampleWaiver('file:1', 'ssh-v2-only', null, '2023-06-30', 'bob', 'Old images until the upgrade'),
  sampleWaiver('7', 'telnet-disabled', 'sw-lab-1', '2023-04-15', 'alice', 'Lab switch, retired soon'),
];

/**
 * The sample report as mailed with every insight (each kind of changed pair), fetched by the catch-up with its details
 * missing, and without insights; then (`ownerGroups`) as an owner group gets it (with its own counts, without them, and
 * as the fallback's whole report).
 */
export async function sampleInsightViews(config: SampleSettings, { ownerGroups = true } = {}): Promise<ReportView[]> {
  const delivery = readSampleDelivery();
  // A history (newest first) that keeps nothing: the sample's trend is computed, never recorded.
  const insights = (reports: ReportSnapshot[], failures: FailingPair[] | null) => {
    const before = (cursor: ReportCursor) => reports.filter((r) => r.createdMs < cursor.createdMs);
    return createReportInsights({
      budgetMs: 0,
      clock: { now: () => Date.parse(delivery.report.created) },
      history: {
        findReportBefore: async (_series, cursor) => before(cursor)[0],
        listReportsBefore: async (_series, cursor, limit) => before(cursor).slice(0, limit).reverse(),
        saveReport: async () => undefined,
        findReport: async () => undefined,
      },
      stored: async () => ({ failing: failures, states: SAMPLE_STATES }),
      waivers: async () => SAMPLE_WAIVERS,
    })(delivery);
  };
  // Its series before it: report 28 (three more ntp-servers failures, gone since) and report 27.
  const snapshot = (id: number, created: string, failing: FailingPair[]) => ({
    ...buildReportSnapshot(delivery, 'sample|', failing),
    ...identify(id, created),
  });
  const stillFailing = SAMPLE_FAILURES.slice(1, 4);
  const enriched = await insights(
    [snapshot(28, '2023-04-11T19:36:33Z', [...stillFailing, ...SAMPLE_GONE]), snapshot(27, '2023-04-10T19:36:33Z', stillFailing)],
    SAMPLE_FAILURES,
  );
  // The first report of its series, NetBox out of reach.
  const missing: ReportInsights = {
    ...(await insights([], null)),
    kept: { status: 'missing', code: 'UNREACHABLE', reason: 'Failing tests are not listed: NetBox could not be reached (ECONNREFUSED).' },
  };
  const options = {
    mail: config.mail,
    netboxUrl: config.netbox.url,
    maxFailures: 1,
    attachCsv: true,
    // The CSV's header and first 2 failing results.
    attachMaxBytes: 300,
    relayUrl: 'https://relay.example.com',
  };
  // The one with its details missing came by the catch-up (its webhook never arrived).
  const caughtUp = { ...delivery, receivedVia: 'catch-up' as const };
  const [whole, ...others] = [enriched, missing, undefined].map((insights) =>
    buildMailView(insights === missing ? caughtUp : delivery, insights, options),
  );
  const group: OwnerGroupPlan = {
    route: 'sample',
    key: 'o-sample',
    to: ['core-team@example.com'],
    why: 'primary contact of site fra1',
    deviceIds: [10, 11],
    devices: ['sw-core-1', 'sw-core-2'],
    fixedDevices: ['sw-edge-2'],
    counts: { HIGH: { passed: 2, count: 2 }, MIDDLE: { passed: 3, count: 6 }, LOW: { passed: 0, count: 0 } },
    whole: false,
    note: null,
  };
  const groups: OwnerGroupPlan[] = [
    group,
    { ...group, counts: null, countsMissing: 'NetBox could not give the report’s results' },
    { ...group, key: 'whole', whole: true, note: 'NetBox could not say who owns what: this is the whole report.' },
  ];
  const owners = ownerGroups ? groups.map((g) => buildOwnerGroupView(whole, delivery, enriched, g, options)) : [];
  return [whole, ...others, ...owners].map((mail) => mail.view);
}

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

/** Sample digests that reach every branch of a digest template: several reports, a silent source, a late empty period. */
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

/** A named source overdue, and a catch-up's notice with a report not mailed, deleted ones and a refused one. */
const SAMPLE_NOTICES: NoticeJob[] = [
  { kind: 'watchdog', alert: { kind: 'overdue', source: 'lab', silentSince: START_MS, expectEveryMs: 24 * HOUR_MS, detectedAt: START_MS } },
  {
    kind: 'missed',
    notice: {
      kind: 'missed',
      detectedAt: START_MS,
      mailed: 1,
      skipped: [{ id: 27, created: '2023-04-10T05:00:00Z', link: 'https://netbox.example.com/plugins/validity/reports/27/' }],
      deleted: [24, 25],
      refused: [26],
    },
  },
];

/** Renders the samples with every set and each route's set and subject: a broken template fails at boot ({@link TemplateError}). */
export async function verifyRouteTemplates(renderer: Renderer, config: SampleSettings & Pick<Config, 'routing'>): Promise<void> {
  // The owner groups' samples only where a route mails by owner: the others never render those branches.
  const views = await sampleInsightViews(config, { ownerGroups: config.routing.routes.some((r) => r.owners !== undefined) });
  const digestViews = sampleDigestContents(config.mail.timezone).map(buildDigestView);
  // Every other sample as a repeat_after reminder.
  const onRoute = (name: string) => views.map((view, i) => ({ ...view, route: { name, reminder: i % 2 === 1, reason: 'sample' } }));
  // The digest and the notice sets render digests and notices, not reports: each is checked with its own samples only.
  for (const set of renderer.sets.filter((s) => s !== DIGEST_TEMPLATE_SET && s !== NOTICE_TEMPLATE_SET))
    for (const view of onRoute('sample')) renderer.render(view, set);
  if (renderer.sets.includes(DIGEST_TEMPLATE_SET)) for (const view of digestViews) renderer.render(view, DIGEST_TEMPLATE_SET);
  if (renderer.sets.includes(NOTICE_TEMPLATE_SET))
    for (const job of SAMPLE_NOTICES) renderer.render(buildNoticeView(job, config.mail.timezone), NOTICE_TEMPLATE_SET);
  for (const route of config.routing.routes) {
    const set = route.digest ? (route.template ?? DIGEST_TEMPLATE_SET) : route.template;
    if (set !== undefined && !renderer.sets.includes(set)) {
      const found = renderer.sets.join(', ');
      const reason = route.digest
        ? `digest route ${route.name} needs the template set "${set}" (subject.hbs, html.hbs, text.hbs); copy templates/${DIGEST_TEMPLATE_SET} from the shipped templates into your TEMPLATES_DIR (found: ${found})`
        : `route ${route.name} uses template set "${set}", which is not a folder with subject.hbs, html.hbs and text.hbs (found: ${found})`;
      throw new TemplateError(path.join(renderer.dir, set), new Error(reason));
    }
    // Its set's own subject with the views that set was just rendered with (the implicit default route's case): checked above.
    if (route.subject === undefined && (route.digest !== undefined) === (set === DIGEST_TEMPLATE_SET)) continue;
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

import type { Config } from '../config';
import type { ChartView } from './create-report-insights';
import { bandOf, buildLinks, findNetboxBasePath, formatDateTime, formatPercent, passPercent, SEVERITIES } from '../report';
import type { ReportLinks, Severity } from '../report';
import type { OwnerGroupPlan, ReceivedVia } from '../store';
import { addOverall, pairKey, type Trend } from '../trend';
import type { ReportDelivery } from '../webhook';
import { buildCsvAttachment, buildEnrichmentView, type EnrichmentView } from './build-enrichment-view';
import { buildTrendView, formatAccepted, formatDeltaShort, type TrendView, type VerdictView } from './build-trend-view';
import { buildWaiversView, type WaiversView } from './build-waivers-view';
import { shareInsights, type ReportInsights } from './create-report-insights';

// The views below are what the templates read: templates/README.md documents each field.

/** The mail's colour scale: the worst failing severity, `ok` when nothing failed, `none` when nothing ran. */
type Tone = 'high' | 'middle' | 'low' | 'ok' | 'none';

/** Each optional section is null rather than absent: templates run in strict mode. */
export type ReportView = ReturnType<typeof buildReportView>;

export interface ReportViewOptions {
  /** Links stay relative without it. */
  netboxUrl?: string;
  mail: Omit<Config['mail'], 'outboxDir' | 'templatesDir'>;
  /** Given when the relay serves several NetBox sources: the mail names it. */
  sourceName?: string;
  /** Null or absent when the relay did not try (a preview, or a caller without NetBox). */
  enrichment?: EnrichmentView | null;
  trend?: TrendView | null;
  chart?: ChartView | null;
  waivers?: WaiversView | null;
  links?: ReportLinks;
  /** An owner group NetBox could not count: its failing results per severity, which its subject names. */
  uncountedFailed?: Record<Severity, number>;
}

const CAUGHT_UP_TEXT =
  'Fetched from NetBox by the relay: its webhook never arrived. The time above is when the run started (NetBox keeps no end time).';

/** The template data for one report delivery (a stored one says how it was received). Pure. */
export function buildReportView(delivery: ReportDelivery & { receivedVia?: ReceivedVia }, options: ReportViewOptions) {
  const r = delivery.report;
  const c = delivery.counts;
  const waivers = options.waivers ?? null;
  const waived = waivers?.bySeverity ?? { HIGH: 0, MIDDLE: 0, LOW: 0 };
  const severities = SEVERITIES.map((s) => buildRatio(s, c[s].passed, c[s].count, waived[s], s.toLowerCase() as Tone));
  // The first severity with failed results (and the failures of lower severities).
  const worstIndex = severities.findIndex((s) => s.failed > 0);
  const worstRatio = severities[worstIndex];
  const worst = worstRatio && {
    severity: worstRatio.name as Severity,
    failed: worstRatio.failed,
    tone: worstRatio.tone,
    otherFailed: severities.slice(worstIndex + 1).reduce((n, s) => n + s.failed, 0),
  };
  const trend = options.trend ?? null;
  const verdict = trend?.verdict ?? null;
  const accepted = waivers?.count ?? 0;
  // The Overall line's colour is the verdict's.
  const overall = buildRatio(
    'Overall',
    c.overall.passed,
    c.overall.count,
    accepted,
    (verdict && VERDICT_TONE[verdict.direction]) ?? 'none',
  );
  // What the mail lists as failing: accepted exceptions are counted apart (the ratios stay NetBox's).
  const own = options.uncountedFailed;
  const highFailed = own ? own.HIGH : c.HIGH.count - c.HIGH.passed - waived.HIGH;
  const netboxHost = options.netboxUrl ? new URL(options.netboxUrl).host : null;
  const view = {
    report: {
      id: r.id,
      display: r.display ?? `report-${r.id}`,
      deviceCount: r.device_count,
      testCount: r.test_count,
      created: r.created,
      customFields: r.custom_fields ?? {},
    },
    completedAt: delivery.completedAt,
    completedAtText: formatDateTime(delivery.completedAt, options.mail.timezone),
    timezone: options.mail.timezone,
    triggeredBy: delivery.triggeredBy ?? null,
    receivedVia: delivery.receivedVia ?? 'webhook',
    receivedText: delivery.receivedVia === 'catch-up' ? CAUGHT_UP_TEXT : null,
    overall,
    severities,
    highFailed,
    hasFailures: overall.failed > 0,
    worst: worst ?? null,
    tone: worst?.tone ?? (overall.hasResults && overall.failed === 0 ? 'ok' : 'none'),
    verdict,
    netboxHost,
    netboxName: options.sourceName ?? netboxHost ?? 'NetBox',
    source: options.sourceName === undefined ? null : { name: options.sourceName },
    links: options.links ?? buildLinks(r.id, r.url, r.results_url, options.netboxUrl),
    defaultSubject: '',
    enrichment: options.enrichment ?? null,
    trend,
    chart: options.chart ?? null,
    owners: null as ReturnType<typeof buildOwnersView> | null,
    waivers,
  };
  view.defaultSubject = buildDefaultSubject(view, own);
  return view;
}

const VERDICT_TONE: Partial<Record<VerdictView['direction'], Tone>> = { worse: 'high', mixed: 'middle', better: 'ok' };

/** One line of the summary; `failingTone` is its tone when any of its results failed. */
function buildRatio(name: string, passed: number, count: number, waived: number, failingTone: Tone) {
  const percent = passPercent(passed, count);
  const failed = count - passed;
  const tone: Tone = count === 0 ? 'none' : failed === 0 ? 'ok' : failingTone;
  return {
    name,
    passed,
    failed,
    count,
    percentText: formatPercent(passed, count),
    percent,
    barWidth: percent === null ? 0 : Math.round(percent),
    band: bandOf(percent),
    tone,
    hasResults: count > 0,
    waived,
  };
}

type RatioView = ReturnType<typeof buildRatio>;

/** `Worse: 83.3% (−7.4), 5 HIGH failing, 1 accepted — report 202 · prod`: what matters first, within a phone inbox's ~40 characters. */
function buildDefaultSubject(
  view: Pick<ReportView, 'report' | 'overall' | 'highFailed' | 'trend' | 'waivers' | 'source' | 'netboxHost'>,
  own: Record<Severity, number> | undefined,
): string {
  const { overall, highFailed, trend } = view;
  const instance = view.source?.name ?? view.netboxHost;
  const where = ` \u2014 report ${view.report.id}${instance ? ` \u00b7 ${instance}` : ''}`;
  const v = trend?.verdict ?? null;
  if (!overall.hasResults && !own) return `${v ? `${v.word}: no results` : 'No results'}${where}`;
  const accepted = view.waivers?.count ?? 0;
  const failed = own ? own.HIGH + own.MIDDLE + own.LOW : overall.failed - accepted;
  const failing =
    highFailed > 0
      ? `${highFailed} HIGH failing`
      : failed > 0
        ? `${failed} failing, no HIGH`
        : accepted > 0 || own
          ? '0 failing'
          : 'all passed';
  const verdict = v ? `${v.word}: ` : '';
  if (own) return `${verdict}counts unavailable, ${failing}${where}`;
  const lead = v ? `${verdict}${overall.percentText}${formatDeltaShort(trend?.overall ?? null)}` : `${overall.percentText} passed`;
  return `${lead}, ${failing}${formatAccepted(accepted)}${v?.scopeChanged ? ', scope changed' : ''}${where}`;
}

/** How a mail's views are built from the insight stage's data. */
export interface MailViewOptions extends Pick<ReportViewOptions, 'netboxUrl' | 'mail' | 'sourceName'> {
  maxFailures: number;
  /** Whether some route has attach_csv: the CSV is built once for every route that attaches it. */
  attachCsv: boolean;
  attachMaxBytes: number;
  /** RELAY_URL: each failing result links to the dashboard's pre-filled waiver form. */
  relayUrl?: string;
}

export type MailView = ReturnType<typeof buildMailView>;

/** Some failing results (`kept`: the report's, or an owner group's) and their trend. */
type MailScope = Partial<Pick<ReportInsights, 'kept' | 'chart' | 'waivers'>> &
  Pick<ReportViewOptions, 'uncountedFailed'> & { trend: Trend | null; failingKnown: boolean; csvSuffix: string };

/** A mail's view and CSV over `scope`: by default the whole report's, from the insight stage's data (absent without it). */
export function buildMailView(
  delivery: ReportDelivery,
  insights: ReportInsights | undefined,
  options: MailViewOptions,
  scope: MailScope = {
    kept: insights?.kept,
    trend: insights?.recorded?.trend ?? null,
    // NetBox gave this report's failing results (the waivers leave it a list, however short).
    failingKnown: insights?.kept.status === 'ok',
    csvSuffix: '',
    chart: insights?.chart,
    waivers: insights?.waivers,
  },
) {
  const { kept, trend, failingKnown, csvSuffix, waivers, ...extra } = scope;
  const links = buildLinks(delivery.report.id, delivery.report.url, delivery.report.results_url, options.netboxUrl);
  const basePath = findNetboxBasePath(delivery.report.url);
  const relayUrl = options.relayUrl?.replace(/\/+$/, '');
  const sectionOptions = {
    ...options,
    reportId: delivery.report.id,
    basePath,
    failedResultsUrl: links.failedResults,
    // Each failing result it lists carries its badge (new, or failing since): the whole report's.
    trend: insights?.recorded?.trend ?? null,
    waiverExpired: new Set(insights?.waivers?.outcome.waiverExpired.map((m) => pairKey(m.pair)) ?? []),
    waiverForm: relayUrl ? { relayUrl, source: delivery.source } : undefined,
  };
  const csv = kept ? buildCsvAttachment(kept, sectionOptions, csvSuffix) : { attachments: [], attachment: null };
  const enrichment = kept && buildEnrichmentView(kept, { ...sectionOptions, attachment: csv.attachment });
  const trendOptions = { ...delivery.counts.overall, timezone: options.mail.timezone, basePath, netboxUrl: options.netboxUrl };
  const states = insights?.recorded?.options.states;
  const trendView = trend && buildTrendView(trend, { ...trendOptions, currentFailingKnown: failingKnown, states });
  const waiversView = waivers && buildWaiversView(waivers.outcome, waivers.now);
  const view = buildReportView(delivery, { ...options, ...extra, links, enrichment, trend: trendView, waivers: waiversView });
  return { view, attachments: csv.attachments };
}

/** Names of a group's devices listed in the mail; the rest are counted. */
const MAX_LISTED_DEVICES = 20;

/** One owner group's mail: its devices' failing results, ratios and trend (see shareInsights) beside the report's totals. */
export function buildOwnerGroupView(
  whole: MailView,
  delivery: ReportDelivery,
  insights: ReportInsights | undefined,
  group: OwnerGroupPlan,
  options: MailViewOptions,
): MailView {
  const owners = buildOwnersView(group, whole.view);
  if (group.whole) return { view: { ...whole.view, owners }, attachments: whole.attachments };
  const scoped = group.counts
    ? { ...delivery, report: { ...delivery.report, device_count: owners.deviceCount }, counts: addOverall(group.counts) }
    : delivery;
  // No chart: the series chart is the whole report's.
  const scope = { ...shareInsights(insights, group), failingKnown: true, csvSuffix: '-owners' };
  const { view, attachments } = buildMailView(scoped, insights, options, scope);
  return { view: { ...view, owners }, attachments };
}

function buildOwnersView(group: OwnerGroupPlan, report: { overall: RatioView; severities: RatioView[] }) {
  const fixed = group.fixedDevices ?? [];
  return {
    key: group.key,
    why: group.why,
    note: group.note,
    whole: group.whole,
    devices: group.devices.slice(0, MAX_LISTED_DEVICES),
    moreDevices: Math.max(0, group.devices.length - MAX_LISTED_DEVICES),
    fixedDevices: fixed.slice(0, MAX_LISTED_DEVICES),
    moreFixedDevices: Math.max(0, fixed.length - MAX_LISTED_DEVICES),
    deviceCount: group.ownedDevices ?? group.devices.length + fixed.length,
    ownRatios: !group.whole && group.counts !== null,
    countsMissing: group.counts === null ? (group.countsMissing ?? 'NetBox could not count its results') : null,
    owned: !group.whole && group.counts !== null && group.ownedDevices != null,
    report: { overall: report.overall, severities: report.severities },
  };
}

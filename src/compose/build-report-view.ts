import type { ChartView } from './build-mail-chart';
import {
  bandOf,
  buildLinks,
  formatDateTime,
  formatPercent,
  passPercent,
  SEVERITIES,
  type Band,
  type ReportLinks,
  type Severity,
} from '../report';
import type { ReportDelivery } from '../webhook';
import type { ReceivedVia } from '../store';
import type { EnrichmentView, TrendView } from './build-insight-views';
import { formatAccepted, formatDeltaShort, type VerdictView } from './build-verdict-view';
import type { WaiversView } from './build-waivers-view';

// The view types below are what the templates read: templates/README.md documents each field.

interface RatioView {
  name: string;
  passed: number;
  failed: number;
  count: number;
  percentText: string;
  /** Null when count is 0. */
  percent: number | null;
  barWidth: number;
  band: Band;
  /** A severity's line: its state. The Overall line: the verdict's colour, never "the worst severity failing somewhere". */
  tone: Tone;
  hasResults: boolean;
  /** Of `failed`: accepted exceptions (the ratio stays validity's). */
  waived: number;
}

/** The mail's colour scale: the worst failing severity, `ok` when nothing failed, `none` when nothing ran. */
type Tone = 'high' | 'middle' | 'low' | 'ok' | 'none';

interface WorstView {
  severity: Severity;
  failed: number;
  tone: Tone;
  /** Failed results of lower severities. */
  otherFailed: number;
}

/** `owners`: an owner group's share of the report, and the whole report's figures beside it. */
export interface OwnersView {
  key: string;
  why: string;
  note: string | null;
  whole: boolean;
  devices: string[];
  moreDevices: number;
  fixedDevices: string[];
  moreFixedDevices: number;
  deviceCount: number;
  ownRatios: boolean;
  /** Why the group's own ratios are unavailable (the figures shown are the whole report's); null when counted. */
  countsMissing: string | null;
  owned: boolean;
  report: { overall: RatioView; severities: RatioView[] };
}

/** Everything a template can use. Each optional section is null rather than absent: templates run in strict mode. */
export interface ReportView {
  report: { id: number; display: string; deviceCount: number; testCount: number; created: string; customFields: Record<string, unknown> };
  completedAt: string;
  completedAtText: string;
  timezone: string;
  triggeredBy: string | null;
  receivedVia: ReceivedVia;
  receivedText: string | null;
  overall: RatioView;
  severities: RatioView[];
  highFailed: number;
  hasFailures: boolean;
  worst: WorstView | null;
  tone: Tone;
  verdict: VerdictView | null;
  netboxHost: string | null;
  netboxName: string;
  source: { name: string } | null;
  links: ReportLinks;
  defaultSubject: string;
  /** Null when the relay did not try (a preview, or a caller without NetBox). */
  enrichment: EnrichmentView | null;
  trend: TrendView | null;
  chart: ChartView | null;
  owners: OwnersView | null;
  waivers: WaiversView | null;
}

export interface ReportViewOptions extends Partial<Pick<ReportView, 'enrichment' | 'trend' | 'chart' | 'waivers' | 'receivedVia'>> {
  /** NetBox's base URL; links stay relative without it. */
  netboxUrl?: string;
  timezone: string;
  /** Given when the relay serves several NetBox sources: the mail names it. */
  sourceName?: string;
  /**
   * An owner group NetBox could not count: its failing results per severity. The subject says its counts are
   * unavailable and names these, never the report's figures (which the body shows as the whole report's).
   */
  uncountedFailed?: Record<Severity, number>;
}

const CAUGHT_UP_TEXT =
  'Fetched from NetBox by the relay: its webhook never arrived. The time above is when the run started (NetBox keeps no end time).';

/** Builds the template data for one report delivery. Pure: same input, same view. */
export function buildReportView(delivery: ReportDelivery, options: ReportViewOptions): ReportView {
  const r = delivery.report;
  const c = delivery.counts;
  const waivers = options.waivers ?? null;
  const waived = waivers?.bySeverity ?? { HIGH: 0, MIDDLE: 0, LOW: 0 };
  const severities = SEVERITIES.map((s) => buildRatio(s, c[s].passed, c[s].count, waived[s]));
  const worst = buildWorst(severities);
  const trend = options.trend ?? null;
  const verdict = trend?.verdict ?? null;
  const overall = buildRatio('Overall', c.overall.passed, c.overall.count, waivers?.count ?? 0);
  overall.tone = toneOfOverall(overall, verdict);
  // What the mail lists as failing: accepted exceptions are counted apart (the ratios stay NetBox's).
  const own = options.uncountedFailed;
  const highFailed = own ? own.HIGH : c.HIGH.count - c.HIGH.passed - waived.HIGH;
  const accepted = waivers?.count ?? 0;
  const netboxHost = options.netboxUrl ? new URL(options.netboxUrl).host : null;
  return {
    report: {
      id: r.id,
      display: r.display ?? `report-${r.id}`,
      deviceCount: r.device_count,
      testCount: r.test_count,
      created: r.created,
      customFields: r.custom_fields ?? {},
    },
    completedAt: delivery.completedAt,
    completedAtText: formatDateTime(delivery.completedAt, options.timezone),
    timezone: options.timezone,
    triggeredBy: delivery.triggeredBy ?? null,
    receivedVia: options.receivedVia ?? 'webhook',
    receivedText: options.receivedVia === 'catch-up' ? CAUGHT_UP_TEXT : null,
    overall,
    severities,
    highFailed,
    hasFailures: c.overall.passed < c.overall.count,
    worst,
    tone: worst?.tone ?? (overall.hasResults && overall.failed === 0 ? 'ok' : 'none'),
    verdict,
    netboxHost,
    netboxName: options.sourceName ?? netboxHost ?? 'NetBox',
    source: options.sourceName === undefined ? null : { name: options.sourceName },
    links: buildLinks(r.id, r.url, r.results_url, options.netboxUrl),
    defaultSubject: buildDefaultSubject({
      id: r.id,
      percentText: overall.percentText,
      highFailed,
      failed: own ? own.HIGH + own.MIDDLE + own.LOW : overall.failed - accepted,
      accepted,
      hasResults: overall.hasResults,
      uncounted: own !== undefined,
      instance: options.sourceName ?? netboxHost,
      verdict,
      deltaText: formatDeltaShort(trend?.overall ?? null),
    }),
    enrichment: options.enrichment ?? null,
    trend,
    chart: options.chart ?? null,
    owners: null,
    waivers,
  };
}

const SEVERITY_TONE: Record<Severity, Tone> = { HIGH: 'high', MIDDLE: 'middle', LOW: 'low' };

/** One line of the summary; its tone is its severity's when any of its results failed. */
function buildRatio(name: string, passed: number, count: number, waived = 0): RatioView {
  const percent = passPercent(passed, count);
  const failed = count - passed;
  const tone: Tone = count === 0 ? 'none' : failed === 0 ? 'ok' : (SEVERITY_TONE[name as Severity] ?? 'none');
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

/** The first severity (HIGH, MIDDLE, LOW) with failed results, or null. */
function buildWorst(severities: RatioView[]): WorstView | null {
  const index = severities.findIndex((s) => s.failed > 0);
  const worst = severities[index];
  if (!worst) return null;
  const otherFailed = severities.slice(index + 1).reduce((n, s) => n + s.failed, 0);
  return { severity: worst.name as Severity, failed: worst.failed, tone: worst.tone, otherFailed };
}

/** The Overall line's colour: the verdict's, or the state's when there is nothing to compare. */
function toneOfOverall(overall: RatioView, verdict: VerdictView | null): Tone {
  if (!overall.hasResults) return 'none';
  if (overall.failed === 0) return 'ok';
  return (verdict && VERDICT_TONE[verdict.direction]) ?? 'none';
}

const VERDICT_TONE: Partial<Record<VerdictView['direction'], Tone>> = { worse: 'high', mixed: 'middle', better: 'ok' };

interface SubjectFacts {
  id: number;
  percentText: string;
  /** Failing results the mail lists as failing (accepted exceptions apart), HIGH and all. */
  highFailed: number;
  failed: number;
  accepted: number;
  hasResults: boolean;
  /** The source's name with several sources, else NETBOX_URL's host. */
  instance: string | null;
  verdict: VerdictView | null;
  deltaText: string;
  /** The mail's own ratios are unknown: the subject says so instead of a percentage. */
  uncounted: boolean;
}

/**
 * `Worse: 83.3% (−7.4), 5 HIGH failing — report 202 · prod`. The verdict, the percentage and the HIGH
 * count come first, inside the ~40 characters a phone's inbox shows; the report and the instance after.
 * Accepted exceptions are counted apart (`1 HIGH failing, 1 accepted`, `0 failing, 3 accepted`).
 */
function buildDefaultSubject(f: SubjectFacts): string {
  const where = ` \u2014 report ${f.id}${f.instance ? ` \u00b7 ${f.instance}` : ''}`;
  if (!f.hasResults && !f.uncounted) return `${f.verdict ? `${f.verdict.word}: no results` : 'No results'}${where}`;
  const failing =
    f.highFailed > 0
      ? `${f.highFailed} HIGH failing`
      : f.failed > 0
        ? `${f.failed} failing, no HIGH`
        : f.accepted > 0 || f.uncounted
          ? '0 failing'
          : 'all passed';
  const verdict = f.verdict ? `${f.verdict.word}: ` : '';
  if (f.uncounted) return `${verdict}counts unavailable, ${failing}${where}`;
  const lead = f.verdict ? `${verdict}${f.percentText}${f.deltaText}` : `${f.percentText} passed`;
  return `${lead}, ${failing}${formatAccepted(f.accepted)}${f.verdict?.scopeChanged ? ', scope changed' : ''}${where}`;
}

import {
  buildFailuresCsv,
  createFailureSummarizer,
  enrichReport,
  readPairStates,
  type Enrichment,
  type FailingResult,
} from '../enrichment';
import { buildLinks, buildWebUrl, findNetboxBasePath, formatPercent } from '../report';
import { buildMailChart, type ChartView } from './build-mail-chart';
import {
  buildEnrichmentView,
  buildTrendView,
  type EnrichmentView,
  type EnrichmentViewOptions,
  type TrendView,
} from './build-insight-views';
import type { MailAttachment } from '../mail';
import type { NetboxClient } from '../netbox';
import { systemClock, type Clock, type Logger } from '../shared';
import {
  buildReportSnapshot,
  buildSourceSeriesKey,
  recordReportTrend,
  pairKey,
  type FailingPair,
  type LeftOutPairs,
  type PairStates,
  type RecordedTrend,
  type ReportHistory,
  type ReportSnapshot,
  type Trend,
  type TrendComparison,
} from '../trend';
import type { ReportDelivery } from '../webhook';
import { applyWaivers, type Waiver, type WaiverOutcome } from '../waivers';
import { buildWaiversView, type WaiversView } from './build-waivers-view';

/**
 * Failing tests a mail lists, the rest counted in "and N more" linked to NetBox: a large report's HTML stays
 * well under Gmail's 102 KB clipping size, past which the links at the end of the mail are hidden.
 */
export const MAX_FAILING_TESTS_LISTED = 50;

/** Size cap of the CSV attachment (a route's attach_csv): 5 MB passes the attachment limits of common mail servers. */
export const CSV_ATTACHMENT_MAX_BYTES = 5_000_000;

/** Reports the trend chart plots, the current one included: enough to see a direction, few enough to read each point. */
export const CHART_REPORTS = 12;

/** What the relay adds to a report's mail beyond the webhook's counts. */
export interface ReportInsights {
  enrichment: EnrichmentView;
  /** Derived and recorded here once; routes decide on it. Null without history. */
  trend: Trend | null;
  trendView: TrendView | null;
  attachments: MailAttachment[];
  /** Built once for every route of this report; null when off (chartReports 0) or without history. */
  chart: ChartView | null;
  /** The failing results (NetBox's order) that are not accepted exceptions; null when NetBox could not provide them. */
  failures: FailingResult[] | null;
  /** Why `failures` is null, as data for routing and the log. */
  failuresMissing: { code: string; reason: string } | null;
  /** What NetBox said of the pairs that changed since the previous report; null when nothing was compared. */
  states: PairStates | null;
  waivers: WaiversView | null;
  /** The failing results kept (without the waived ones) and how their section is built: an owner's share is built from them ({@link buildSectionOf}). */
  section: { kept: Enrichment; options: SectionOptions };
  /** What an owner's own trend is computed from (buildTrendOfDevices); null without history. */
  comparison: TrendComparison | null;
}

/** How the failing-tests section and its CSV are built. */
type SectionOptions = Omit<EnrichmentViewOptions, 'attachment'> & Pick<ReportInsightsOptions, 'attachCsv' | 'attachMaxBytes'>;

/** The failing-tests section and CSV of some failing results (`suffix` names the CSV: `-owners` for one owner's devices). */
function buildSection(current: Enrichment, options: SectionOptions, suffix: string): Pick<ReportInsights, 'enrichment' | 'attachments'> {
  const built = buildCsvAttachment(current, { ...options, suffix });
  return { enrichment: buildEnrichmentView(current, { ...options, attachment: built.attachment }), attachments: built.attachments };
}

/** The failing-tests section and CSV of some of the failing results only (one owner's devices). */
export function buildSectionOf(
  insights: Pick<ReportInsights, 'section' | 'enrichment' | 'attachments'>,
  keep: (result: FailingResult) => boolean,
): Pick<ReportInsights, 'enrichment' | 'attachments'> {
  const { kept, options } = insights.section;
  return kept.status === 'ok' ? buildSection(summarize(kept.summary.results.filter(keep)), options, '-owners') : insights;
}

export interface ReportInsightsOptions {
  /** Absent without NETBOX_URL. */
  client?: NetboxClient;
  hasToken: boolean;
  netboxUrl?: string;
  /** How long all of one mail's NetBox requests may take. */
  budgetMs: number;
  /** The clock the budget is measured on; the NetBox client must use the same one. */
  clock?: Clock;
  /** Absent: no trend. */
  history?: ReportHistory;
  timezone: string;
  maxFailures: number;
  /** Whether some route has attach_csv. */
  attachCsv: boolean;
  attachMaxBytes: number;
  /** 0 or absent: no chart. */
  chartReports?: number;
  logger: Logger;
  /**
   * The failing results kept with this report when its mail was composed (preview): used instead of
   * asking NetBox when every one has its ids, so the failing-tests section reads as it was sent.
   */
  storedFailures?: (delivery: ReportDelivery) => Promise<FailingPair[] | null | undefined>;
  /** What NetBox said of the changed pairs when this report's mail was composed (preview): used instead of asking again. */
  storedStates?: (delivery: ReportDelivery) => Promise<PairStates | null | undefined>;
  /** Called with the error code when NetBox could not provide the results (for /metrics). */
  onNetboxError?: (code: string) => void;
  /** The waiver book's `forReport`; absent: none apply. */
  waivers?: (options: { source: string; previousReportAt: number | null }) => Promise<Waiver[]>;
  /** RELAY_URL: each failing result links to the dashboard's pre-filled waiver form. */
  relayUrl?: string;
}

/**
 * Binds enrichment (NetBox's failing results), the CSV attachment and the trend for the composer.
 * Runs in the worker, never in the webhook request. Never throws and never takes longer than the
 * budget plus a few local queries: whatever fails, the mail still goes with the webhook's counts.
 */
export function createReportInsights(options: ReportInsightsOptions): (delivery: ReportDelivery, log?: Logger) => Promise<ReportInsights> {
  return async (delivery, deliveryLog) => {
    const report = delivery.report;
    const log = (deliveryLog ?? options.logger).child({ reportId: report.id });
    const basePath = findNetboxBasePath(report.url);
    const links = buildLinks(report.id, report.url, report.results_url, options.netboxUrl);
    // One budget for every request to NetBox this mail makes: the failing results, then the changed pairs.
    const deadline = (options.clock ?? systemClock).now() + options.budgetMs;
    const enrichment = await readFailures(options, delivery, log, deadline);

    const failing = toFailingPairs(enrichment);
    const recorded = options.history ? await recordTrend(options, delivery, failing, deadline) : null;
    if (recorded?.states?.unknownReason)
      log.warn(
        { reason: recorded.states.unknownReason },
        'the mail cannot tell fixed from not evaluated: NetBox could not say which pairs passed',
      );
    const trend = recorded?.trend ?? null;
    const outcome = recorded?.outcome ?? null;
    const trendView = trend
      ? buildTrendView(trend, {
          timezone: options.timezone,
          basePath,
          netboxUrl: options.netboxUrl,
          currentFailingKnown: failing !== null,
          passed: delivery.counts.overall.passed,
          count: delivery.counts.overall.count,
          states: recorded?.states ?? null,
        })
      : null;
    // Accepted exceptions leave the failing list (and the CSV, owner groups, device routes) here, once.
    const kept = outcome ? withoutWaived(enrichment, outcome) : enrichment;
    const expired = new Set(outcome?.waiverExpired.map((m) => pairKey(m.pair)) ?? []);
    const relayUrl = options.relayUrl?.replace(/\/+$/, '');
    const section: ReportInsights['section'] = {
      kept,
      options: {
        reportId: report.id,
        basePath,
        netboxUrl: options.netboxUrl,
        failedResultsUrl: links.failedResults,
        maxFailures: options.maxFailures,
        attachCsv: options.attachCsv,
        attachMaxBytes: options.attachMaxBytes,
        trend,
        waiverExpired: expired,
        waiverForm: relayUrl ? { relayUrl, source: delivery.source } : undefined,
      },
    };
    // Built after the trend: each failing result it lists carries its badge (new, or failing since).
    const whole = buildSection(kept, section.options, '');

    return {
      ...whole,
      trend,
      trendView,
      chart: recorded?.chart ?? null,
      states: recorded?.states ?? null,
      comparison: recorded?.comparison ?? null,
      failures: kept.status === 'ok' ? kept.summary.results : null,
      failuresMissing: kept.status === 'missing' ? { code: kept.code, reason: kept.reason } : null,
      waivers: outcome ? buildWaiversView(outcome, recorded!.now) : null,
      section,
    };
  };
}

/**
 * Records the report in its series and compares it with the previous one (a history that cannot be
 * read is a storage failure like any other: the delivery is tried again; the report itself is written
 * by the batch's settle, with the rest of the batch). The waivers are applied here, once,
 * where the failing pairs meet the trend: the verdict and every route decision see them left out.
 */
async function recordTrend(
  options: ReportInsightsOptions,
  delivery: ReportDelivery,
  failing: FailingPair[] | null,
  deadline: number,
): Promise<
  Omit<RecordedTrend, 'states'> & {
    chart: ChartView | null;
    outcome: WaiverOutcome<FailingPair> | null;
    now: number;
    states: PairStates | null;
  }
> {
  const series = buildSourceSeriesKey({ source: delivery.source, netboxUrl: options.netboxUrl, reportUrl: delivery.report.url });
  const snapshot = buildReportSnapshot(delivery, series, failing);
  const now = (options.clock ?? systemClock).now();
  const decided: { outcome: WaiverOutcome<FailingPair> | null } = { outcome: null };
  const readWaivers = options.waivers;
  const leaveOut =
    readWaivers && failing
      ? async (previous: ReportSnapshot | null): Promise<LeftOutPairs> => {
          const { source } = delivery;
          const previousReportAt = previous?.createdMs ?? null;
          const waivers = await readWaivers({ source, previousReportAt });
          decided.outcome = applyWaivers(failing, waivers, now, { source, previousReportAt });
          return buildLeftOut(decided.outcome, previous, waivers, now);
        }
      : undefined;
  const readStates = failing
    ? async (previous: ReportSnapshot) => {
        if (!previous.failing) return { now: null, before: null, deletedTests: [], deletedDevices: [], unknownReason: null };
        return (
          (await options.storedStates?.(delivery)) ??
          readPairStates({
            client: options.client,
            resultsUrl: delivery.report.results_url,
            current: failing,
            previous: { reportId: previous.reportId, failing: previous.failing },
            budget: { deadline },
            budgetMs: options.budgetMs,
          })
        );
      }
    : undefined;
  const { trend, comparison, states } = await recordReportTrend(options.history!, snapshot, { leaveOut, readStates });
  const chart = await prepareChart(options, snapshot);
  return { trend, comparison, chart, outcome: decided.outcome, now, states: states ?? null };
}

/**
 * What the comparison leaves out: this report's waived pairs; of the previous report, the pairs waived
 * now (so a waiver made since is not "fixed") and those whose waiver has ended since (so they come back
 * as newly failing, "waiver expired").
 */
function buildLeftOut(
  outcome: WaiverOutcome<FailingPair>,
  previous: ReportSnapshot | null,
  waivers: readonly Waiver[],
  now: number,
): LeftOutPairs {
  const current = new Set(outcome.waived.map((m) => pairKey(m.pair)));
  const before = new Set(outcome.waiverExpired.map((m) => pairKey(m.pair)));
  if (previous?.failing) for (const m of applyWaivers(previous.failing, waivers, now).waived) before.add(pairKey(m.pair));
  return { current, previous: before };
}

/** The failing results without the waived ones (the same enrichment when none is). */
function withoutWaived(enrichment: Enrichment, outcome: WaiverOutcome<FailingPair>): Enrichment {
  if (enrichment.status !== 'ok' || outcome.waived.length === 0) return enrichment;
  const waived = new Set(outcome.waived.map((m) => pairKey(m.pair)));
  return summarize(enrichment.summary.results.filter((r) => !waived.has(pairKey(r))));
}

/** Some failing results (in NetBox's order) as an enrichment of their own. */
function summarize(results: readonly FailingResult[]): Enrichment {
  const summarizer = createFailureSummarizer();
  summarizer.addResults(results);
  return { status: 'ok', summary: summarizer.finish() };
}

/** The failing results: those kept with the report (preview) when each has its ids, else NetBox's. */
async function readFailures(options: ReportInsightsOptions, delivery: ReportDelivery, log: Logger, deadline: number): Promise<Enrichment> {
  const stored = await options.storedFailures?.(delivery);
  const enrichment =
    stored && stored.every((pair) => pair.ids)
      ? summarize(
          stored.map(({ device, test, severity, ids }) => ({
            resultId: ids!.result,
            device,
            deviceId: ids!.device,
            test,
            testId: ids!.test,
            severity,
          })),
        )
      : await enrichReport(delivery, {
          client: options.client,
          hasToken: options.hasToken,
          budgetMs: options.budgetMs,
          clock: options.clock,
          deadline,
        });
  if (enrichment.status === 'missing' && enrichment.code !== 'NO_NETBOX_URL' && enrichment.code !== 'NO_TOKEN') {
    log.warn(
      { code: enrichment.code, error: enrichment.detail ?? enrichment.reason },
      'mail goes without the failing results: NetBox could not provide them',
    );
    options.onNetboxError?.(enrichment.code);
  }
  return enrichment;
}

/** The failing pairs NetBox gave (with their ids), or null when they are unknown. */
function toFailingPairs(enrichment: Enrichment): FailingPair[] | null {
  if (enrichment.status !== 'ok') return null;
  return enrichment.summary.results.map((r) => ({
    device: r.device,
    test: r.test,
    severity: r.severity,
    ids: { result: r.resultId, device: r.deviceId, test: r.testId },
  }));
}

/** The chart of this report and the ones before it in its series (its own row is written after the mail is composed). */
async function prepareChart(options: ReportInsightsOptions, snapshot: ReportSnapshot): Promise<ChartView | null> {
  const limit = options.chartReports ?? 0;
  if (limit <= 0 || !options.history?.listReportsBefore) return null;
  const earlier = await options.history.listReportsBefore(snapshot.series, snapshot, limit - 1);
  // One point is not a trend: the first report of a series goes without a chart.
  if (earlier.length === 0) return null;
  const { passed, count } = snapshot.counts.overall;
  return buildMailChart(snapshot, earlier, formatPercent(passed, count));
}

/** The CSV of the failing results (a route's attach_csv), as an attachment and as the section's note about it. */
function buildCsvAttachment(
  enrichment: Enrichment,
  options: Pick<ReportInsightsOptions, 'attachCsv' | 'attachMaxBytes' | 'netboxUrl'> & {
    reportId: number;
    basePath: string;
    failedResultsUrl: string;
    suffix: string;
  },
): { attachments: ReportInsights['attachments']; attachment: EnrichmentView['attachment'] } {
  if (!options.attachCsv || enrichment.status !== 'ok' || enrichment.summary.results.length === 0)
    return { attachments: [], attachment: null };
  const csv = buildFailuresCsv(enrichment.summary.results, {
    maxBytes: options.attachMaxBytes,
    resultUrl: (id) => buildWebUrl(options.basePath, `/plugins/validity/test-results/${id}/`, options.netboxUrl),
  });
  const fileName = `report-${options.reportId}-failures${options.suffix}.csv`;
  return {
    attachments: [{ filename: fileName, content: csv.content, contentType: 'text/csv; charset=utf-8; header=present' }],
    attachment: {
      fileName,
      rows: csv.rows,
      totalRows: csv.totalRows,
      truncated: csv.truncated,
      note: csv.truncated
        ? `The attached ${fileName} lists the first ${csv.rows} of ${csv.totalRows} failing results: it is capped at ${options.attachMaxBytes} bytes. All of them: ${options.failedResultsUrl}`
        : null,
    },
  };
}

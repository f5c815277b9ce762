import { createFailureSummarizer, enrichReport, readPairStates, type Enrichment } from '../enrichment';
import { buildTrendChart, type TrendChartPoint } from '../mail';
import { countPerSeverity, formatPercent, mapCountLines } from '../report';
import type { NetboxClient } from '../netbox';
import { systemClock, type Clock, type Logger } from '../shared';
import type { OwnerGroupPlan } from '../store';
import {
  buildDevicesTrend,
  buildReportSnapshot,
  buildSourceSeriesKey,
  buildRecordedTrend,
  hasIds,
  readTrendHistory,
  pairKey,
  type FailingPair,
  type FailingResult,
  type ReportHistory,
  type ReportPoint,
  type ReportSnapshot,
} from '../trend';
import type { ReportDelivery } from '../webhook';
import { applyWaivers, type Waiver } from '../waivers';

/** Reports the trend chart plots, the current one included: enough to see a direction, few enough to read each point. */
export const CHART_REPORTS = 12;

/** What the relay adds to a report beyond the webhook's counts, as data: the mail's views are built from it in compose. */
export type ReportInsights = Awaited<ReturnType<ReturnType<typeof createReportInsights>>>;

export interface ReportInsightsOptions {
  /** Absent without NETBOX_URL. */
  client?: NetboxClient;
  netboxUrl?: string;
  /** How long all of one mail's NetBox requests may take. */
  budgetMs: number;
  /** The clock the budget is measured on; the NetBox client must use the same one. */
  clock?: Clock;
  /** Absent: no trend. */
  history?: ReportHistory;
  /** This report as kept when its mail was composed (preview), so the mail reads as it was sent. */
  stored?: (delivery: ReportDelivery) => Promise<Pick<ReportSnapshot, 'failing' | 'states'> | undefined>;
  /** Called with the error code when NetBox could not provide the results (for /metrics). */
  onNetboxError?: (code: string) => void;
  /** The waiver book's `forReport`; absent: none apply. */
  waivers?: (options: { source: string; previousReportAt: number | null }) => Promise<Waiver[]>;
}

/**
 * NetBox's failing results, the waivers and the trend. Never throws, never takes longer than the budget plus a few local
 * queries: whatever fails, the mail still goes. Without `log` (a preview, the boot's samples) nothing is logged.
 */
export function createReportInsights(options: ReportInsightsOptions) {
  return async (delivery: ReportDelivery, log?: Logger) => {
    // One budget for every request to NetBox this mail makes: the failing results, then the changed pairs.
    const deadline = (options.clock ?? systemClock).now() + options.budgetMs;
    // The report as kept when its mail was composed (preview): its failing results when each has its ids, else NetBox's.
    const storedReport = await options.stored?.(delivery);
    const enrichment = storedReport?.failing?.every(hasIds)
      ? summarize(storedReport.failing)
      : await enrichReport(delivery, { client: options.client, budgetMs: options.budgetMs, deadline });
    if (enrichment.status === 'missing' && enrichment.code !== 'NO_NETBOX_URL' && enrichment.code !== 'NO_TOKEN') {
      log?.warn(
        { code: enrichment.code, error: enrichment.detail ?? enrichment.reason },
        'mail goes without the failing results: NetBox could not provide them',
      );
      options.onNetboxError?.(enrichment.code);
    }
    const failing = enrichment.status === 'ok' ? enrichment.summary.results : null;
    const recorded = options.history ? await recordTrend(options, delivery, failing, deadline, storedReport?.states) : null;
    const states = recorded?.recorded.options.states;
    if (states?.unknownReason)
      log?.warn({ reason: states.unknownReason }, 'the mail cannot tell fixed from not evaluated: NetBox could not say which pairs passed');
    const waived = recorded?.recorded.options.leftOut?.current;
    // Accepted exceptions leave the failing list (and the CSV, owner groups, device routes) here, once.
    return {
      /** The failing results NetBox gave (NetBox's order) without the accepted exceptions, or why they are missing. */
      kept:
        waived && enrichment.status === 'ok' && waived.size > 0
          ? summarize(enrichment.summary.results.filter((r) => !waived.has(pairKey(r))))
          : enrichment,
      /** The trend, recorded here once, and the history it was compared with; null without history. Routes decide on its trend. */
      recorded: recorded?.recorded ?? null,
      chart: recorded?.chart ?? null,
      /** The waivers applied to the failing pairs, at `now`; null when none could apply. */
      waivers: recorded?.waivers ?? null,
    };
  };
}

/** Records the report in its series and compares it; the waivers are applied here, once, so every route decision sees them left out. */
async function recordTrend(
  options: ReportInsightsOptions,
  delivery: ReportDelivery,
  failing: FailingPair[] | null,
  deadline: number,
  storedStates: ReportSnapshot['states'] | undefined,
) {
  const series = buildSourceSeriesKey({ source: delivery.source, netboxUrl: options.netboxUrl, reportUrl: delivery.report.url });
  const snapshot = buildReportSnapshot(delivery, series, failing);
  const now = (options.clock ?? systemClock).now();
  const past = await readTrendHistory(options.history!, snapshot);
  const previous = past.history[0] ?? null;
  const waived = options.waivers && failing ? await leaveOutWaived(options.waivers, delivery.source, failing, previous, now) : null;
  const states =
    failing && previous
      ? await readPairStates({
          client: options.client,
          resultsUrl: delivery.report.results_url,
          current: failing,
          previous,
          stored: async () => storedStates,
          budget: { deadline },
          budgetMs: options.budgetMs,
        })
      : undefined;
  const recorded = buildRecordedTrend(snapshot, past, { leftOut: waived?.leftOut, states });
  await options.history!.saveReport(recorded.current);
  // The chart of this report and the ones before it; one point is not a trend: the first of a series goes without.
  const earlier = await options.history!.listReportsBefore(snapshot.series, snapshot, CHART_REPORTS - 1);
  const { passed, count } = snapshot.counts.overall;
  const chart = earlier.length
    ? buildMailChart([...earlier, snapshot].map(toChartPoint), formatPercent(passed, count), 'this report')
    : null;
  return { recorded, chart, waivers: waived && { outcome: waived.outcome, now } };
}

/**
 * The waivers applied to this report's failing pairs, and what the comparison leaves out: this report's waived pairs; of
 * the previous report, the pairs waived now (a waiver made since is not "fixed") and those whose waiver has ended since.
 */
async function leaveOutWaived(
  readWaivers: NonNullable<ReportInsightsOptions['waivers']>,
  source: string,
  failing: FailingPair[],
  previous: ReportSnapshot | null,
  now: number,
) {
  const previousReportAt = previous?.createdMs ?? null;
  const waivers = await readWaivers({ source, previousReportAt });
  const outcome = applyWaivers(failing, waivers, now, { previousReportAt });
  const current = new Set(outcome.waived.map((m) => pairKey(m.pair)));
  const before = new Set(outcome.waiverExpired.map((m) => pairKey(m.pair)));
  if (previous?.failing) for (const m of applyWaivers(previous.failing, waivers, now).waived) before.add(pairKey(m.pair));
  return { outcome, leftOut: { current, previous: before } };
}

/** An owner group's share: its devices' failing results, their trend (see buildDevicesTrend), and the waivers every mail must name. */
export function shareInsights(insights: ReportInsights | undefined, group: OwnerGroupPlan) {
  const ids = new Set(group.deviceIds);
  const names = new Set(group.devices);
  const kept = insights?.kept;
  const own =
    kept?.status === 'ok'
      ? kept.summary.results.filter((r) => (r.ids.device !== null ? ids.has(r.ids.device) : names.has(r.device)))
      : null;
  const recorded = insights?.recorded;
  const devices = new Set([...group.devices, ...(group.fixedDevices ?? [])]);
  const waivers = insights?.waivers;
  return {
    kept: own ? summarize(own) : kept,
    trend: recorded ? buildDevicesTrend(recorded.current, recorded.history, { ...recorded.options, devices, counts: group.counts }) : null,
    waivers: waivers && { ...waivers, outcome: { ...waivers.outcome, waived: [], expiring: [] } },
    // Uncounted, its subject and headers name its own failures, never the report's figures as its own.
    uncountedFailed: group.counts === null ? countPerSeverity(own ?? []) : undefined,
  };
}

function summarize(results: readonly FailingResult[]): Enrichment {
  const summarizer = createFailureSummarizer();
  summarizer.addResults(results);
  return { status: 'ok', summary: summarizer.finish() };
}

/** The trend chart as the templates show it (`{{> trend-chart}}`, `{{> trend-chart-text}}`). */
export type ChartView = ReturnType<typeof buildMailChart>;

/** The chart of `points` (oldest first, the last one shaded as `currentLabel`, "this report") with `currentText` ("62.5%"). */
export const buildMailChart = (points: TrendChartPoint[], currentText: string, currentLabel: string) => ({
  ...buildTrendChart(points),
  currentText,
  currentLabel,
});

/** A stored report as a point of the chart: pass ratios from its counts, null where it had no results. */
export function toChartPoint(snapshot: ReportPoint): TrendChartPoint {
  const c = snapshot.counts;
  return {
    reportId: snapshot.reportId,
    at: snapshot.created,
    ratios: mapCountLines((line) => (c[line].count > 0 ? c[line].passed / c[line].count : null)),
  };
}

import { buildTrend, failingKeys, type LeftOutPairs, type Trend, type TrendOptions } from './build-trend';
import type { PairStates, ReportCursor, ReportPoint, ReportReadOptions, ReportSnapshot } from './types';

/** The part of the Store the trend needs. */
export interface ReportHistory {
  /** The newest report of `series` created before (createdMs, reportId), in that order (see {@link ReportReadOptions}). */
  findReportBefore(series: string, before: ReportCursor, options?: ReportReadOptions): Promise<ReportSnapshot | undefined>;
  /** The newest `limit` reports of `series` before (createdMs, reportId), oldest first, without failing sets (the chart); absent: no chart. */
  listReportsBefore?(series: string, before: ReportCursor, limit: number): Promise<ReportPoint[]>;
  /** Stores (or replaces, by dedup key) a report's snapshot. */
  saveReport(snapshot: ReportSnapshot): Promise<void>;
  /** The report stored under a dedup key (to learn whether it arrived late); absent: none arrives late. */
  findReport?(dedupKey: string): Promise<ReportSnapshot | undefined>;
}

/** A report's trend, and what buildDevicesTrend starts from for any subset of its devices (the history reaches every streak). */
export interface RecordedTrend {
  trend: Trend;
  current: ReportSnapshot;
  history: ReportSnapshot[];
  options: TrendOptions;
}

/** How far back "failing since" looks; older streaks read "failing for at least N reports". */
export const STREAK_HISTORY_MAX = 30;

/**
 * Compares `current` with the report created before it in its series (NetBox's order: created, then id),
 * composed or not yet (then on counts only, and the trend says so); a report that arrived late compares
 * with the one before it, not with the newest. Then stores `current`, idempotently: a retried mail records
 * the same report again and computes the same trend.
 */
export async function recordReportTrend(
  store: ReportHistory,
  current: ReportSnapshot,
  options: {
    /** The pairs to leave out (accepted exceptions), once the previous report is known; the stored snapshot keeps every pair. */
    leaveOut?: (previous: ReportSnapshot | null) => Promise<LeftOutPairs>;
    /** What NetBox's results say of the pairs that changed since `previous` (see PairStates), kept with the report; absent: see buildTrend. */
    readStates?: (previous: ReportSnapshot) => Promise<PairStates>;
  } = {},
): Promise<RecordedTrend> {
  const history: ReportSnapshot[] = [];
  let truncated = false;
  let cursor = { createdMs: current.createdMs, reportId: current.reportId };
  // Only as far back as some pair of this report is still failing in every report seen so far.
  const open = new Set(current.failing ? failingKeys(current.failing) : []);
  for (;;) {
    // The previous report's ids go into the trend (its fixed pairs link to their results); past it the
    // walk asks only which pairs failed.
    const report = await store.findReportBefore(current.series, cursor, { failingIds: history.length === 0 });
    if (!report || report.dedupKey === current.dedupKey) break;
    if (history.length === STREAK_HISTORY_MAX) {
      truncated = true;
      break;
    }
    history.push(report);
    cursor = { createdMs: report.createdMs, reportId: report.reportId };
    if (!report.failing) break;
    const failing = failingKeys(report.failing);
    for (const key of open) if (!failing.has(key)) open.delete(key);
    if (open.size === 0) break;
  }
  const trendOptions: TrendOptions = {
    historyTruncated: truncated,
    leftOut: options.leaveOut ? await options.leaveOut(history[0] ?? null) : undefined,
    arrivedLate: (await store.findReport?.(current.dedupKey))?.arrivedLate === true,
    previousPending: history[0]?.pending === true,
    states: options.readStates && history[0] ? await options.readStates(history[0]) : undefined,
  };
  const trend = buildTrend(current, history, trendOptions);
  await store.saveReport(trendOptions.states ? { ...current, states: trendOptions.states } : current);
  return { trend, current, history, options: trendOptions };
}

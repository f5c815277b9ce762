import { buildTrend, failingKeys, type Trend, type TrendOptions } from './build-trend';
import type { ReportCursor, ReportPoint, ReportReadOptions, ReportSnapshot } from './types';

/** The part of the Store the trend needs. */
export interface ReportHistory {
  /** The newest report of `series` created before (createdMs, reportId), in that order (see {@link ReportReadOptions}). */
  findReportBefore(series: string, before: ReportCursor, options?: ReportReadOptions): Promise<ReportSnapshot | undefined>;
  /** The newest `limit` reports of `series` before (createdMs, reportId), oldest first, without failing sets (the chart). */
  listReportsBefore(series: string, before: ReportCursor, limit: number): Promise<ReportPoint[]>;
  /** Stores (or replaces, by dedup key). */
  saveReport(snapshot: ReportSnapshot): Promise<void>;
  findReport(dedupKey: string): Promise<ReportSnapshot | undefined>;
}

/** A report's trend, and what buildDevicesTrend starts from for any subset of its devices (the history reaches every streak). */
export interface RecordedTrend {
  trend: Trend;
  /** The report as its series stores it: with the pair states it was compared with. */
  current: ReportSnapshot;
  /** Newest first: the previous report, then as far back as some pair of the report failed in each. */
  history: ReportSnapshot[];
  options: TrendOptions;
}

type TrendHistory = Pick<RecordedTrend, 'history' | 'options'>;

/** How far back "failing since" looks; older streaks read "failing for at least N reports". */
export const STREAK_HISTORY_MAX = 30;

/** Reads the reports before `current` in its series (NetBox's order), pending ones included; a late report reads those before it. */
export async function readTrendHistory(store: ReportHistory, current: ReportSnapshot): Promise<TrendHistory> {
  const history: ReportSnapshot[] = [];
  let truncated = false;
  let cursor = { createdMs: current.createdMs, reportId: current.reportId };
  // Only as far back as some pair of this report is still failing in every report seen so far.
  const open = new Set(current.failing ? failingKeys(current.failing) : []);
  for (;;) {
    // Only the previous report's ids go into the trend (its fixed pairs link to their results).
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
  const arrivedLate = (await store.findReport(current.dedupKey))?.arrivedLate === true;
  return { history, options: { historyTruncated: truncated, arrivedLate, previousPending: history[0]?.pending === true } };
}

/** `current`'s trend without `leftOut`, fixed told from not evaluated by `states`. Pure: a retry stores the same `current`. */
export function buildRecordedTrend(
  current: ReportSnapshot,
  { history, options: read }: TrendHistory,
  compared: Pick<TrendOptions, 'leftOut' | 'states'> = {},
): RecordedTrend {
  const options: TrendOptions = { ...read, ...compared };
  const trend = buildTrend(current, history, options);
  return { trend, current: compared.states ? { ...current, states: compared.states } : current, history, options };
}

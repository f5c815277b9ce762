export {
  buildTrend,
  pairKey,
  TREND_PAIR_CAP,
  type LeftOutPairs,
  type PairBadge,
  type Trend,
  type TrendDelta,
  type FailingStreak,
} from './build-trend';
export { recordReportTrend, STREAK_HISTORY_MAX, type RecordedTrend, type ReportHistory } from './record-report-trend';
export { buildDevicesTrend } from './build-devices-trend';
export { buildReportSnapshot, buildSeriesKey, buildSourceSeriesKey } from './build-report-snapshot';
export type {
  FailingIds,
  FailingPair,
  PairStates,
  ReportCounts,
  ReportCursor,
  ReportPoint,
  ReportReadOptions,
  ReportSnapshot,
} from './types';
export { groupPairsByTest, GROUP_DEVICES_SHOWN, type TestPairsGroup } from './group-pairs-by-test';
export {
  buildPeriodTrend,
  buildPeriodPoint,
  WORST_DEVICES_SHOWN,
  type SeriesPeriodTrend,
  type PeriodPoint,
  type PeriodRatios,
  type WorstDevice,
} from './build-period-trend';
export { decideVerdict, VERDICTS, type Verdict, type VerdictDecision, type VerdictFacts } from './decide-verdict';

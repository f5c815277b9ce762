export { buildTrend, failingKeys, pairKey, type LeftOutPairs, type PairBadge, type TestPairsGroup, type Trend } from './build-trend';
export { addOverall, signOf, type TrendDelta } from './build-deltas';
export { buildRecordedTrend, readTrendHistory, STREAK_HISTORY_MAX, type RecordedTrend, type ReportHistory } from './read-trend-history';
export { buildDevicesTrend } from './build-devices-trend';
export { buildReportSnapshot, buildSourceSeriesKey } from './build-report-snapshot';
export * from './types';
export { buildPeriodTrend, buildPeriodPoint, type SeriesPeriodTrend, type PeriodPoint } from './build-period-trend';
export { decideVerdict, type Verdict } from './decide-verdict';

export { createMetrics, type MetricsOptions, type RelayMetrics } from './create-metrics';
export { registerWaiverGauge } from './register-waiver-gauge';
export { registerCatchUpSeries, type CatchUpCount } from './register-catch-up-series';

export { createMetrics, type RelayMetrics } from './create-metrics';
export { registerWaiverGauge } from './register-waiver-gauge';
export { registerCatchUpSeries } from './register-catch-up-series';

export { createMetrics, registerWaiverGauge, type RelayMetrics } from './create-metrics';
export { registerCatchUpSeries } from './register-catch-up-series';

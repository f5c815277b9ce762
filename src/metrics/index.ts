export { createMetrics, type MetricsOptions, type RelayMetrics } from './create-metrics';
export { registerWaiverGauge } from './register-waiver-gauge';

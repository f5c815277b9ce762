export { createMetrics, type MetricsOptions, type RelayMetrics } from './create-metrics';

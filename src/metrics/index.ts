export { createMetrics, registerWaiverGauge, type RelayMetrics } from './create-metrics';
export { registerCatchUpSeries, type CatchUpOutcome } from './register-catch-up-series';

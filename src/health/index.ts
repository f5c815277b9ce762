export { createTransportHealth, type TransportHealth } from './transport-health';
export { checkReadiness, type Readiness } from './check-readiness';

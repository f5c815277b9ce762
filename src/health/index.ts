export { createSmtpHealth, type SmtpHealth, type SmtpStatus } from './smtp-health';
export { checkReadiness, type Readiness, type ReadinessCheck, type ReadinessDeps } from './check-readiness';

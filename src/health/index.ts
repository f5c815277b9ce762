export { createSmtpHealth, type SmtpHealth } from './smtp-health';
export { checkReadiness, type Readiness } from './check-readiness';

export { verifySignature, signBody } from './verify-signature';
export { parseDelivery, normalizeTimestamp, assignSource, buildDedupKey, DEFAULT_SOURCE_NAME, type ReportDelivery } from './parse-delivery';
export { type Report } from './envelope-schema';
export type { WebhookOutcome } from './webhook-outcome';

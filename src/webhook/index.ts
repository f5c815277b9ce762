export { verifySignature, signBody } from './verify-signature';
export {
  parseDelivery,
  normalizeTimestamp,
  buildDedupKey,
  DEFAULT_SOURCE_NAME,
  type ReportDelivery,
  type ReportFields,
} from './parse-delivery';
export type { WebhookOutcome } from './webhook-outcome';

export { verifySignature, signBody } from './verify-signature';
export {
  parseDelivery,
  normalizeTimestamp,
  buildDedupKey,
  DEFAULT_SOURCE_NAME,
  type ReportDelivery,
  type ReportFields,
  type WebhookOutcome,
} from './parse-delivery';

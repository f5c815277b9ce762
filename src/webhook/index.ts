export { verifySignature, signBody, type SignatureVerdict } from './verify-signature';
export {
  parseDelivery,
  normalizeTimestamp,
  assignSource,
  buildDedupKey,
  DEFAULT_SOURCE_NAME,
  type Delivery,
  type ReportDelivery,
  type IgnoredDelivery,
} from './parse-delivery';
export { ReportSchema, EnvelopeSchema, type Report, type Envelope } from './envelope-schema';
export type { WebhookOutcome } from './webhook-outcome';

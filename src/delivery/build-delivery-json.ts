import type { DeliveryRecord } from '../store';

/**
 * A delivery as the admin API and `deliveries --json` show it: times as ISO 8601 (UTC), never the
 * stored body. One shape for both, documented in the README ("Admin API").
 */
export interface DeliveryJson {
  id: number;
  /** The idempotency key: `data.id@data.created`. */
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  /** The client address that posted it (the NetBox instance, or the proxy in front). */
  source: string;
  state: DeliveryRecord['state'];
  attempts: number;
  receivedAt: string;
  nextAttemptAt: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  messageId: string | null;
  sentAt: string | null;
  updatedAt: string;
}

/** Maps a stored record to its JSON view; `mask` hides secret values that may sit in an error text. */
export function buildDeliveryJson(record: DeliveryRecord, mask: (text: string) => string = (t) => t): DeliveryJson {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: record.id,
    dedupKey: record.dedupKey,
    reportId: record.reportId,
    reportCreated: record.reportCreated,
    completedAt: record.completedAt,
    source: record.source,
    state: record.state,
    attempts: record.attempts,
    receivedAt: iso(record.receivedAt)!,
    nextAttemptAt: iso(record.nextAttemptAt),
    lastError: record.lastError === null ? null : mask(record.lastError),
    lastErrorCode: record.lastErrorCode,
    messageId: record.messageId,
    sentAt: iso(record.sentAt),
    updatedAt: iso(record.updatedAt)!,
  };
}

/** Replaces every occurrence of each secret (and its URL-encoded form) with [REDACTED]. */
export function createSecretMask(secrets: readonly string[]): (text: string) => string {
  const values = secrets.filter((s) => s.length >= 4).flatMap((s) => [s, encodeURIComponent(s)]);
  return (text) => values.reduce((out, s) => out.split(s).join('[REDACTED]'), text);
}

import {
  DELIVERY_STATES,
  StorageUnavailableError,
  type ClaimedDelivery,
  type DeliveryRecord,
  type DeliveryState,
  type InsertResult,
  type NewDelivery,
} from './types';

/** A `deliveries` row as both stores read it (the same column names and number types in SQLite and PostgreSQL). */
export interface DeliveryRow {
  id: number;
  dedup_key: string;
  report_id: number;
  report_created: string;
  completed_at: string;
  source: string;
  body?: Buffer;
  received_at: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_error: string | null;
  last_error_code: string | null;
  message_id: string | null;
  sent_at: number | null;
  updated_at: number;
}

/** Every column of a delivery record, without its body (listings never load bodies). */
export const DELIVERY_RECORD_COLUMNS = `id, dedup_key, report_id, report_created, completed_at, source, received_at, state, attempts,
  next_attempt_at, last_error, last_error_code, message_id, sent_at, updated_at`;

/** Turns a row into the record the Store interface returns. */
export function decodeDeliveryRow(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    dedupKey: row.dedup_key,
    reportId: row.report_id,
    reportCreated: row.report_created,
    completedAt: row.completed_at,
    source: row.source,
    state: row.state,
    attempts: row.attempts,
    receivedAt: row.received_at,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    lastErrorCode: row.last_error_code,
    messageId: row.message_id,
    sentAt: row.sent_at,
    updatedAt: row.updated_at,
  };
}

/** Claimed rows (with their bodies) as claims, oldest first (RETURNING promises no order). */
export function decodeClaimedRows(rows: DeliveryRow[]): ClaimedDelivery[] {
  return rows.sort((a, b) => a.id - b.id).map((row) => ({ ...decodeDeliveryRow(row), body: row.body! }));
}

/** The row an insert returns (or the lookup of a key already stored). */
export interface InsertedRow {
  id: number;
  dedup_key: string;
}

/**
 * Each delivery's result from the rows the insert returned (`inserted`) and the ids found for the
 * keys it did not insert (`existing`). Only the first occurrence of a key in a batch is new; later
 * ones are duplicates of it.
 */
export function resolveInsertResults(
  deliveries: readonly NewDelivery[],
  inserted: readonly InsertedRow[],
  existing: readonly InsertedRow[],
): InsertResult[] {
  const fresh = new Map(inserted.map((r) => [r.dedup_key, r.id]));
  const known = new Map(existing.map((r) => [r.dedup_key, r.id]));
  return deliveries.map((d) => {
    const id = fresh.get(d.dedupKey);
    if (id !== undefined) {
      fresh.delete(d.dedupKey);
      known.set(d.dedupKey, id);
      return { id, duplicate: false };
    }
    const found = known.get(d.dedupKey);
    if (found === undefined) {
      // Inserted by another replica and removed again before we looked: nothing durable to point at.
      throw new StorageUnavailableError(`delivery ${d.dedupKey} vanished while being stored`, 'STORE_RACE');
    }
    return { id: found, duplicate: true };
  });
}

/** The keys of these deliveries that the insert did not return: stored before, to be looked up. */
export function findMissingKeys(deliveries: readonly NewDelivery[], inserted: readonly InsertedRow[]): string[] {
  const fresh = new Set(inserted.map((r) => r.dedup_key));
  return [...new Set(deliveries.map((d) => d.dedupKey).filter((k) => !fresh.has(k)))];
}

/** Counts per state from a GROUP BY, every state named (zero included). */
export function decodeStateCounts(rows: readonly { state: DeliveryState; n: number }[]): Record<DeliveryState, number> {
  const counts = Object.fromEntries(DELIVERY_STATES.map((s) => [s, 0])) as Record<DeliveryState, number>;
  for (const row of rows) counts[row.state] = row.n;
  return counts;
}

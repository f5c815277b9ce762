import type { DeliveryRecord, DeliveryState } from './types';

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

import { COUNT_FIELDS, readCounts, writeCounts, type CountField } from '../report';
import { DEFAULT_SOURCE_NAME, type ReportFields } from '../webhook';
import { selectAs, toFieldName, toValuesCells } from './statement';
import type { DeliveryRecord, DeliveryStateChange, NewDelivery } from './types';

/** A `deliveries` row as both engines read it: the record's fields, and its report's columns (migration 6). */
export type DeliveryRow = Omit<DeliveryRecord, 'report' | 'counts' | 'triggeredBy'> &
  Record<'device_count' | 'test_count' | CountField, number | null> & {
    /** All NULL in a row stored before migration 6 or not a report. */
    display: string | null;
    url: string | null;
    results_url: string | null;
    /** JSON text of `custom_fields` (the string `null` when NetBox sent null, NULL when it sent nothing). */
    custom_fields: string | null;
    triggered_by: string | null;
  };

/** The report's columns: its fields that are not the delivery's own, and its counts under the report's own keys. */
const DELIVERY_REPORT_COLUMNS = `display, url, results_url, device_count, test_count, ${COUNT_FIELDS.join(', ')}, custom_fields, triggered_by`;

/** The columns a new delivery's INSERT binds, in order; its parameters are named after them. */
export const INSERT_COLUMNS =
  `kind, dedup_key, report_id, report_created, completed_at, source, body, received_at, ${DELIVERY_REPORT_COLUMNS},
  netbox_source, received_via`.split(/,\s*/);

/** The fields of a delivery record that are columns of their own; the `source` column is the sender. */
const RECORD_COLUMNS = `id, kind, received_via, dedup_key, report_id, report_created, completed_at, state, attempts, received_at,
  next_attempt_at, last_error, last_error_code, message_id, sent_at, updated_at`;
const RECORD_FIELDS = [...RECORD_COLUMNS.split(/,\s*/).map(toFieldName), 'sender', 'source'] as (keyof DeliveryRow)[];

/** Every column of a delivery record, without its body (listings never load bodies). */
export const DELIVERY_RECORD_COLUMNS = `${selectAs(RECORD_COLUMNS)}, source AS sender, netbox_source AS source, ${DELIVERY_REPORT_COLUMNS}`;

/** A new delivery as the parameters of its INSERT: the report's fields flattened into their columns. */
export function toDeliveryParams(delivery: NewDelivery): Record<string, unknown> {
  const r = delivery.report;
  return {
    kind: delivery.kind ?? 'report',
    dedup_key: delivery.dedupKey,
    report_id: r?.id ?? delivery.reportId ?? 0,
    report_created: r?.created ?? delivery.reportCreated,
    completed_at: delivery.completedAt,
    source: delivery.sender,
    body: delivery.body,
    received_at: delivery.receivedAt,
    display: r?.display ?? null,
    url: r?.url ?? null,
    results_url: r?.results_url ?? null,
    device_count: r?.device_count ?? null,
    test_count: r?.test_count ?? null,
    ...(delivery.counts ? writeCounts(delivery.counts) : Object.fromEntries(COUNT_FIELDS.map((column) => [column, null]))),
    // Absent and null are told apart (NULL and 'null'), so the report reads back as it was parsed.
    custom_fields: r?.custom_fields === undefined ? null : JSON.stringify(r.custom_fields),
    triggered_by: delivery.triggeredBy ?? null,
    netbox_source: delivery.source ?? DEFAULT_SOURCE_NAME,
    received_via: delivery.receivedVia ?? 'webhook',
  };
}

/**
 * The report of a row, trusted as the webhook validated it (no schema check, no body parse). `url` is
 * never NULL in a report's row, so it tells a row that has none.
 */
function decodeRowReport(row: DeliveryRow): ReportFields | null {
  if (row.url === null || row.results_url === null) return null;
  const report: Record<string, unknown> = { id: row.reportId, url: row.url, results_url: row.results_url, created: row.reportCreated };
  if (row.display !== null) report.display = row.display;
  report.device_count = row.device_count ?? 0;
  report.test_count = row.test_count ?? 0;
  if (row.custom_fields !== null) report.custom_fields = JSON.parse(row.custom_fields) as ReportFields['custom_fields'];
  return report as ReportFields;
}

export function decodeDeliveryRow(row: DeliveryRow): DeliveryRecord {
  const fields = Object.fromEntries(RECORD_FIELDS.map((field) => [field, row[field]]));
  const report = decodeRowReport(row);
  const record: DeliveryRecord = { ...(fields as Omit<DeliveryRecord, 'report' | 'counts'>), report, counts: report && readCounts(row) };
  if (row.triggered_by !== null) record.triggeredBy = row.triggered_by;
  return record;
}

/** A delivery's state change as its row in the settle: what its state leaves unset is NULL. */
export function toSettleStateRow(id: number, change: DeliveryStateChange) {
  return { id, nextAttemptAt: null, error: null, code: null, messageId: null, ...change };
}

/** The cells of a settle row, typed (they are read as a table, not inserted). */
export const SETTLE_STATE_VALUES = toValuesCells('id BIGINT, state TEXT, next_attempt_at BIGINT, error TEXT, code TEXT, message_id TEXT');

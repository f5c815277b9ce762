import { COUNT_FIELDS, readCounts, writeCounts, type CountField } from '../report';
import { DEFAULT_SOURCE_NAME, type ReportFields } from '../webhook';
import { selectAs, toFieldName, type ValuesCell } from './statement';
import type { DeliveryRecord, DeliveryStateChange, NewDelivery } from './types';

/**
 * A `deliveries` row as both engines read it: the record's fields, and its report's columns (migration 6). Its
 * `source` column is the sender; the NetBox source is `netbox_source`.
 */
export type DeliveryRow = Omit<DeliveryRecord, 'report' | 'counts' | 'sender' | 'source' | 'triggeredBy'> &
  Record<CountColumn, number | null> & {
    source: string;
    netboxSource: string;
    body?: Buffer;
    /** All NULL in a row stored before migration 6 or not a report. */
    display: string | null;
    url: string | null;
    results_url: string | null;
    /** JSON text of `custom_fields` (the string `null` when NetBox sent null, NULL when it sent nothing). */
    custom_fields: string | null;
    triggered_by: string | null;
  };

/** The counts of a report, each a column of its own under the report's own key. */
const COUNT_COLUMNS = ['device_count', 'test_count', ...COUNT_FIELDS] as const;

type CountColumn = 'device_count' | 'test_count' | CountField;

/** The columns a new delivery's INSERT binds, in order; its parameters are named after them. */
export const INSERT_COLUMNS = [
  'kind',
  'dedup_key',
  'report_id',
  'report_created',
  'completed_at',
  'source',
  'body',
  'received_at',
  'display',
  'url',
  'results_url',
  ...COUNT_COLUMNS,
  'custom_fields',
  'triggered_by',
  'netbox_source',
  'received_via',
] as const;

/** The fields of a delivery record that are columns of their own. */
const RECORD_COLUMNS = `id, kind, received_via, dedup_key, report_id, report_created, completed_at, source, state, attempts, received_at,
  next_attempt_at, last_error, last_error_code, message_id, sent_at, updated_at, netbox_source`;
const RECORD_FIELDS = RECORD_COLUMNS.split(/,\s*/)
  .map(toFieldName)
  .filter((field) => field !== 'source' && field !== 'netboxSource');

/** Every column of a delivery record, without its body (listings never load bodies). */
export const DELIVERY_RECORD_COLUMNS = `${selectAs(RECORD_COLUMNS)}, display, url, results_url, ${COUNT_COLUMNS.join(', ')}, custom_fields, triggered_by`;

/** A new delivery as the parameters of its INSERT: the report's fields flattened into their columns. */
export function toDeliveryParams(delivery: NewDelivery): Record<(typeof INSERT_COLUMNS)[number], unknown> {
  const r = delivery.report;
  const params: Record<string, unknown> = {
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
    // Absent and null are told apart (NULL and 'null'), so the report reads back as it was parsed.
    custom_fields: r?.custom_fields === undefined ? null : JSON.stringify(r.custom_fields),
    triggered_by: delivery.triggeredBy ?? null,
    netbox_source: delivery.source ?? DEFAULT_SOURCE_NAME,
    received_via: delivery.receivedVia ?? 'webhook',
  };
  params.device_count = r?.device_count ?? null;
  params.test_count = r?.test_count ?? null;
  for (const [column, value] of Object.entries(delivery.counts ? writeCounts(delivery.counts) : {})) params[column] = value;
  for (const column of COUNT_FIELDS) params[column] ??= null;
  return params;
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
  const fields = Object.fromEntries(RECORD_FIELDS.map((field) => [field, row[field as keyof DeliveryRow]]));
  const report = decodeRowReport(row);
  const record: DeliveryRecord = {
    ...(fields as Omit<DeliveryRecord, 'report' | 'counts' | 'sender' | 'source'>),
    sender: row.source,
    source: row.netboxSource,
    report,
    counts: report && readCounts(row),
  };
  if (row.triggered_by !== null) record.triggeredBy = row.triggered_by;
  return record;
}

/** A delivery's state change as its row in the settle: what its state leaves unset is NULL. */
export function toSettleStateRow(id: number, change: DeliveryStateChange) {
  return { id, nextAttemptAt: null, error: null, code: null, messageId: null, ...change };
}

/** The cells of a settle row, typed (they are read as a table, not inserted). */
export const SETTLE_STATE_VALUES: readonly ValuesCell[] = [
  ['id', 'BIGINT'],
  ['state', 'TEXT'],
  ['nextAttemptAt', 'BIGINT'],
  ['error', 'TEXT'],
  ['code', 'TEXT'],
  ['messageId', 'TEXT'],
];

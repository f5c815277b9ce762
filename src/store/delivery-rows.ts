import { COUNT_FIELDS, readCounts, writeCounts, type CountField } from '../report';
import { DEFAULT_SOURCE_NAME, type ReportFields } from '../webhook';
import {
  buildValuesTable,
  defineFilteredStatement,
  defineRowsStatement,
  escapeLike,
  selectAs,
  Statement,
  toFieldName,
  type Dialect,
} from './statement';
import type { DeliveryRecord, DeliveryState, DeliveryStateChange, ListOptions, NewDelivery } from './types';

/** The deliveries table: its row as a record and back, and its statements. */

export type Time = { now: number };
type DeliveryId = { id: number };
type Prune = { state: 'sent' | 'dead'; before: number };

/** A delivery's id under its key: the row an insert returns, or the lookup of a key already stored. */
type InsertedRow = { id: number; dedup_key: string };

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

const DELIVERY_REPORT_COLUMNS = `display, url, results_url, device_count, test_count, ${COUNT_FIELDS.join(', ')}, custom_fields, triggered_by`;

/** Its parameters are named after them. */
export const INSERT_COLUMNS =
  `kind, dedup_key, report_id, report_created, completed_at, source, body, received_at, ${DELIVERY_REPORT_COLUMNS},
  netbox_source, received_via`.split(/,\s*/);

/** The fields of a delivery record that are columns of their own; the `source` column is the sender. */
const RECORD_COLUMNS = `id, kind, received_via, dedup_key, report_id, report_created, completed_at, state, attempts, received_at,
  next_attempt_at, last_error, last_error_code, message_id, sent_at, updated_at`;
const RECORD_FIELDS = [...RECORD_COLUMNS.split(/,\s*/).map(toFieldName), 'sender', 'source'] as (keyof DeliveryRow)[];

/** Without its body (listings never load bodies). */
export const DELIVERY_RECORD_COLUMNS = `${selectAs(RECORD_COLUMNS)}, source AS sender, netbox_source AS source, ${DELIVERY_REPORT_COLUMNS}`;

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

/** Trusted as the webhook validated it. `url` is never NULL in a report's row, so it tells a row that has none. */
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

export function toSettleStateRow(id: number, change: DeliveryStateChange) {
  return { id, nextAttemptAt: null, error: null, code: null, messageId: null, ...change };
}

const LIST_CONDITIONS = {
  state: 'state = :state',
  route: 'EXISTS (SELECT 1 FROM route_mails r WHERE r.delivery_id = deliveries.id AND r.route = :route)',
  reportId: 'report_id = :reportId',
  receivedFrom: 'received_at >= :receivedFrom',
  receivedBefore: 'received_at < :receivedBefore',
  // Inside the JSON text of the report's failing pairs; lower() on both sides so each engine folds case alike.
  search: `EXISTS (SELECT 1 FROM reports p WHERE p.dedup_key = deliveries.dedup_key AND lower(p.failing) LIKE lower(:search) ESCAPE '!')`,
  beforeId: 'id < :beforeId',
  afterId: 'id > :afterId',
  netboxSource: 'netbox_source = :netboxSource',
} as const;

type ListCondition = keyof typeof LIST_CONDITIONS;

type ListParams = Omit<ListOptions, 'limit'> & { limit: number };

/** A page newer than `afterId` is read oldest first (the rows just above the key) and reversed by the caller. */
const listDeliveries = defineFilteredStatement<ListCondition, ListParams, DeliveryRow>(
  LIST_CONDITIONS,
  (where, present) =>
    `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries ${where} ORDER BY id ${present.includes('afterId') ? 'ASC' : 'DESC'} LIMIT :limit`,
);

/** The search is escaped as JSON.stringify wrote the names it matches (quotes, backslashes, control characters). */
export function selectListDeliveries(options: ListOptions): { statement: Statement<ListParams, DeliveryRow>; params: ListParams } {
  const params: ListParams = { ...options, limit: options.limit ?? 100 };
  if (options.search !== undefined) params.search = `%${escapeLike(JSON.stringify(options.search).slice(1, -1))}%`;
  const statement = listDeliveries((Object.keys(LIST_CONDITIONS) as ListCondition[]).filter((name) => options[name] !== undefined));
  return { statement, params };
}

/**
 * The ids of the oldest `:limit` due deliveries, as `due_id`. PostgreSQL: one locking `OR` (a claim per state
 * could mail a report twice), SKIP LOCKED so concurrent replicas lock different rows. SQLite: an `OR` would sort
 * every due row, so each state's oldest are merged (`+next_attempt_at` keeps the `(state, id)` index).
 */
function selectDueIds(d: Dialect): string {
  const other = `NOT (netbox_source ${d.inList(':skipSources')})`;
  if (d.name === 'postgres')
    return `SELECT id AS due_id FROM deliveries
         WHERE ((state IN ('queued', 'retrying') AND next_attempt_at <= :now) OR (state = 'sending' AND lease_until <= :now)) AND ${other}
         ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED`;
  return `SELECT due_id FROM (
         SELECT id AS due_id FROM (SELECT id FROM deliveries WHERE state = 'queued' AND +next_attempt_at <= :now AND ${other} ORDER BY id LIMIT :limit)
         UNION ALL SELECT id FROM (SELECT id FROM deliveries WHERE state = 'retrying' AND next_attempt_at <= :now AND ${other} ORDER BY id LIMIT :limit)
         UNION ALL SELECT id FROM (SELECT id FROM deliveries WHERE state = 'sending' AND lease_until <= :now AND ${other} ORDER BY id LIMIT :limit))
       ORDER BY due_id LIMIT :limit`;
}

export const deliveries = {
  /** DO NOTHING tolerates a key twice in one statement and waits for another replica's insert of it to commit. */
  insert: defineRowsStatement<InsertedRow>((count) => {
    const rows = Array.from({ length: count }, (_, i) => {
      const fields = INSERT_COLUMNS.map((column) => `:${column}${i}`).join(', ');
      return `(${fields}, 'queued', 0, :received_at${i}, :received_at${i})`;
    });
    return `INSERT INTO deliveries (${INSERT_COLUMNS.join(', ')}, state, attempts, next_attempt_at, updated_at)
     VALUES ${rows.join(', ')}
     ON CONFLICT (dedup_key) DO NOTHING RETURNING id, dedup_key`;
  }),
  findIdsByKey: new Statement<{ keys: string[] }, InsertedRow>(
    (d) => `SELECT id, dedup_key FROM deliveries WHERE dedup_key ${d.inList(':keys')}`,
  ),
  /** `due_id`, not `id`, so the unqualified RETURNING columns name only the updated table (SQLite allows no qualified ones). */
  claimDue: new Statement<{ now: number; limit: number; owner: string; leaseUntil: number; skipSources: string[] }, DeliveryRow>(
    (d) => `WITH due AS (${selectDueIds(d)})
       UPDATE deliveries SET state = 'sending', attempts = attempts + 1, lease_owner = :owner, lease_until = :leaseUntil, updated_at = :now
       FROM due WHERE deliveries.id = due.due_id
       RETURNING ${DELIVERY_RECORD_COLUMNS}, body`,
  ),
  extendLeases: new Statement<{ ids: number[]; owner: string; leaseUntil: number }>(
    (d) => `UPDATE deliveries SET lease_until = :leaseUntil WHERE state = 'sending' AND lease_owner = :owner AND id ${d.inList(':ids')}`,
  ),
  settle: defineRowsStatement(
    (count) => `WITH ${buildValuesTable('id BIGINT, state TEXT, next_attempt_at BIGINT, error TEXT, code TEXT, message_id TEXT', count)}
       UPDATE deliveries SET state = v.state, next_attempt_at = v.next_attempt_at, last_error = v.error, last_error_code = v.code,
         sent_at = CASE WHEN v.state = 'sent' THEN :now ELSE deliveries.sent_at END,
         message_id = CASE WHEN v.state = 'sent' THEN v.message_id ELSE deliveries.message_id END,
         lease_owner = NULL, lease_until = NULL, updated_at = :now
       FROM v WHERE deliveries.id = v.id`,
  ),
  releaseLeases: new Statement<Time>(
    () => `UPDATE deliveries SET state = 'retrying', next_attempt_at = :now, lease_owner = NULL, lease_until = NULL, updated_at = :now
       WHERE state = 'sending'`,
  ),
  get: new Statement<DeliveryId, DeliveryRow>(() => `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries WHERE id = :id`),
  getBody: new Statement<DeliveryId, { body: Buffer }>(() => 'SELECT body FROM deliveries WHERE id = :id'),
  retryNow: new Statement<DeliveryId & Time>(
    () => `UPDATE deliveries SET next_attempt_at = :now, updated_at = :now WHERE id = :id AND state = 'retrying'`,
  ),
  requeue: defineFilteredStatement<'id' | 'dead', Time & Partial<DeliveryId>, never>(
    { id: "id = :id AND state IN ('dead', 'sent')", dead: "state = 'dead'" },
    (where) => `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = :now, lease_owner = NULL, lease_until = NULL,
         updated_at = :now ${where}`,
  ),
  expediteRetries: new Statement<{ now: number; until: number }>(
    () => `UPDATE deliveries SET next_attempt_at = :now WHERE state = 'retrying' AND next_attempt_at > :now AND next_attempt_at <= :until`,
  ),
  expediteFailedWith: new Statement<{ now: number; codes: string[] }>(
    (d) => `UPDATE deliveries SET next_attempt_at = :now
       WHERE state = 'retrying' AND next_attempt_at > :now AND last_error_code ${d.inList(':codes')}`,
  ),
  countByState: new Statement<Record<string, never>, { state: DeliveryState; n: number }>(
    () => 'SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state',
  ),
  prune: new Statement<Prune>(() => 'DELETE FROM deliveries WHERE state = :state AND updated_at < :before'),
  /** Run before `prune`, in its transaction. */
  pruneSentMessages: new Statement<Prune>(
    () => 'DELETE FROM sent_messages WHERE delivery_id IN (SELECT id FROM deliveries WHERE state = :state AND updated_at < :before)',
  ),
  pruneRouteMails: new Statement<Prune>(
    () => 'DELETE FROM route_mails WHERE delivery_id IN (SELECT id FROM deliveries WHERE state = :state AND updated_at < :before)',
  ),
  /** Each time separately: LEAST is PostgreSQL's only, and SQLite's min(a, b) is null if either is. */
  queueTimes: new Statement<Record<string, never>, { oldest: number | null; due: number | null; lease: number | null }>(
    () => `SELECT (SELECT MIN(received_at) FROM deliveries WHERE state IN ('queued', 'sending', 'retrying')) AS oldest,
         (SELECT MIN(next_attempt_at) FROM deliveries WHERE state IN ('queued', 'retrying')) AS due,
         (SELECT MIN(lease_until) FROM deliveries WHERE state = 'sending') AS lease`,
  ),
  lastReportReceivedAt: new Statement<{ source: string }, { t: number | null }>(
    () => `SELECT MAX(received_at) AS t FROM deliveries WHERE netbox_source = :source AND kind = 'report'`,
  ),
  /** Held until commit; in id order, as every replica takes them. PostgreSQL only: SQLite's write transaction is exclusive. */
  lock: new Statement<{ ids: number[] }, { id: number }>(
    (d) => `SELECT id FROM deliveries WHERE id ${d.inList(':ids')} ORDER BY id FOR UPDATE`,
  ),
};

import { DELIVERY_RECORD_COLUMNS, INSERT_COLUMNS, SETTLE_STATE_VALUES, type DeliveryRow, type InsertedRow } from './delivery-rows';
import { ARRIVAL_COLUMNS, REPORT_COLUMNS, REPORT_POINT_COLUMNS, type ReportPointRow, type ReportRow } from './report-rows';
import type { ReportCursor } from '../trend';
import { ROUTE_MAIL_VALUES, ROUTE_OUTCOME_VALUES, type RouteMailRow } from './route-mail-rows';
import { SENT_MESSAGE_COLUMNS, SENT_MESSAGE_VALUES, type SentMessageRow } from './sent-message-rows';
import type { Dialect } from './dialect';
import { buildValuesRows, defineRowsStatement, defineStatement, type Statement } from './statement';
import { REPORT_FAILING_SETS_KEPT, type DeliveryState, type ListOptions } from './types';
import type { WatchdogRow } from './watchdog-rows';
import type { DigestPeriodRow } from './digest-rows';

/*
 * Every statement of both engines, written once. Parameters are `:name`; what SQLite and PostgreSQL
 * spell differently comes from the Dialect (see dialect.ts). Each store runs these through its own
 * driver and keeps its own transactions, group commit and migrations.
 */

type Time = { now: number };
type DeliveryId = { id: number };

/** A time (epoch ms) read by MIN/MAX, null when no row qualifies. */
type TimeRow = { t: number | null };

/** The condition each listing option adds, named by the option that binds it. */
const LIST_CONDITIONS = {
  state: 'state = :state',
  route: 'EXISTS (SELECT 1 FROM route_mails r WHERE r.delivery_id = deliveries.id AND r.route = :route)',
  reportId: 'report_id = :reportId',
  receivedFrom: 'received_at >= :receivedFrom',
  receivedBefore: 'received_at < :receivedBefore',
  // The failing pairs of the delivery's report as enrichment stored them (same dedup key), as JSON text;
  // lower() on both sides so that each engine folds case alike for the text and the pattern.
  search: `EXISTS (SELECT 1 FROM reports p WHERE p.dedup_key = deliveries.dedup_key AND lower(p.failing) LIKE lower(:search) ESCAPE '!')`,
  beforeId: 'id < :beforeId',
  afterId: 'id > :afterId',
  netboxSource: 'netbox_source = :netboxSource',
} as const;

type ListCondition = keyof typeof LIST_CONDITIONS;
const LIST_CONDITION_NAMES = Object.keys(LIST_CONDITIONS) as ListCondition[];

/** The parameters of a listing statement: the options given, the search as its LIKE pattern. */
export type ListParams = Omit<ListOptions, 'limit'> & { limit: number };

/**
 * Rows of a listing, newest first, by keyset on the id. A page newer than `afterId` is read oldest
 * first (the rows just above the key) and reversed by the caller ({@link toListParams} says so).
 */
function buildListDeliveries(present: readonly ListCondition[]): Statement<ListParams, DeliveryRow> {
  const where = present.map((name) => LIST_CONDITIONS[name]);
  const order = present.includes('afterId') ? 'ASC' : 'DESC';
  return defineStatement(
    () =>
      `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${order} LIMIT :limit`,
  );
}

/** One text per combination of filters, built on first use, so each stays a prepared statement of its own. */
const LIST_DELIVERIES = new Map<string, Statement<ListParams, DeliveryRow>>();

/** The listing statement for these options. */
export function selectListDeliveries(options: ListOptions): Statement<ListParams, DeliveryRow> {
  const present = LIST_CONDITION_NAMES.filter((name) => options[name] !== undefined);
  const key = present.join(',');
  let statement = LIST_DELIVERIES.get(key);
  if (!statement) LIST_DELIVERIES.set(key, (statement = buildListDeliveries(present)));
  return statement;
}

/** `!` escapes LIKE's wildcards, so a name with `%` or `_` matches only itself. */
function escapeLike(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}

/**
 * The parameters of {@link selectListDeliveries}, and whether the rows come oldest first (a page
 * after `afterId`). The search matches inside the JSON text of the failing pairs, so it is escaped
 * as JSON.stringify wrote the names (quotes, backslashes, control characters).
 */
export function toListParams(options: ListOptions): { params: ListParams; ascending: boolean } {
  const params: ListParams = { ...options, limit: options.limit ?? 100 };
  if (options.search !== undefined) params.search = `%${escapeLike(JSON.stringify(options.search).slice(1, -1))}%`;
  for (const name of LIST_CONDITION_NAMES) if (params[name] === undefined) delete params[name];
  return { params, ascending: options.afterId !== undefined };
}

/**
 * The ids of the oldest `:limit` due deliveries, as `due_id`. PostgreSQL: one condition with `OR`,
 * locked with SKIP LOCKED (its partial indexes serve both sides; a claim per state there was tried
 * and mailed a report twice in `postgres-restart`, so it stays one locking SELECT). SQLite: the `OR`
 * made it gather every due row and sort them on each claim (1.5 ms per claim with 20,000 queued);
 * the oldest of each state are read in id order instead (`+next_attempt_at` keeps the
 * queued branch on the `(state, id)` index: queued rows are due on arrival) and merged. SQLite runs
 * one writer at a time, so the one statement is as atomic as before.
 */
function selectDueIds(d: Dialect): string {
  if (d.name === 'postgres')
    return `SELECT id AS due_id FROM deliveries
         WHERE (state IN ('queued', 'retrying') AND next_attempt_at <= :now) OR (state = 'sending' AND lease_until <= :now)
         ORDER BY id LIMIT :limit${d.skipLocked}`;
  return `SELECT due_id FROM (
         SELECT id AS due_id FROM (SELECT id FROM deliveries WHERE state = 'queued' AND +next_attempt_at <= :now ORDER BY id LIMIT :limit)
         UNION ALL SELECT id FROM (SELECT id FROM deliveries WHERE state = 'retrying' AND next_attempt_at <= :now ORDER BY id LIMIT :limit)
         UNION ALL SELECT id FROM (SELECT id FROM deliveries WHERE state = 'sending' AND lease_until <= :now ORDER BY id LIMIT :limit))
       ORDER BY due_id LIMIT :limit`;
}

const deliveries = {
  /**
   * Inserts deliveries (each row's parameters from `toDeliveryParams`), due at once; a key already stored
   * is left alone and not returned. DO NOTHING (not DO UPDATE) tolerates the same key twice in one
   * statement, and on PostgreSQL waits for a concurrent insert of the same key by another replica to commit.
   */
  insert: defineRowsStatement<InsertedRow>((count) => {
    const rows = Array.from({ length: count }, (_, i) => {
      const fields = INSERT_COLUMNS.map((column) => `:${column}${i}`).join(', ');
      return `(${fields}, 'queued', 0, :received_at${i}, :received_at${i})`;
    });
    return `INSERT INTO deliveries (${INSERT_COLUMNS.join(', ')}, state, attempts, next_attempt_at, updated_at)
     VALUES ${rows.join(', ')}
     ON CONFLICT (dedup_key) DO NOTHING RETURNING id, dedup_key`;
  }),
  findIdsByKey: defineStatement<{ keys: string[] }, InsertedRow>(
    (d) => `SELECT id, dedup_key FROM deliveries WHERE dedup_key ${d.inList(':keys')}`,
  ),
  /**
   * Leases the due deliveries, oldest first. The rows are chosen in a WITH query (locked there on
   * PostgreSQL, skipping those another replica holds), then updated by id; `due_id`, not `id`, so
   * the unqualified RETURNING columns name only the updated table (SQLite allows no qualified ones).
   * One statement either way, so a claim stays atomic (see {@link selectDueIds}).
   */
  claimDue: defineStatement<{ now: number; limit: number; owner: string; leaseUntil: number }, DeliveryRow>(
    (d) => `WITH due AS (${selectDueIds(d)})
       UPDATE deliveries SET state = 'sending', attempts = attempts + 1, lease_owner = :owner, lease_until = :leaseUntil, updated_at = :now
       FROM due WHERE deliveries.id = due.due_id
       RETURNING ${DELIVERY_RECORD_COLUMNS}, body`,
  ),
  /** Keeps claims alive while their outcomes wait to be recorded; no state changes, so updated_at stays. */
  extendLeases: defineStatement<{ ids: number[]; owner: string; leaseUntil: number }>(
    (d) => `UPDATE deliveries SET lease_until = :leaseUntil WHERE state = 'sending' AND lease_owner = :owner AND id ${d.inList(':ids')}`,
  ),
  /**
   * Where each delivery of a settled batch goes, one row each (see `SettleStateRow`): sent (with its
   * Message-ID and time), retrying at a time, or dead; the lease ends. A state other than sent keeps the
   * Message-ID and sending time of an earlier attempt.
   */
  settle: defineRowsStatement(
    (count) => `WITH v (id, state, next_attempt_at, error, code, message_id) AS (VALUES ${buildValuesRows(SETTLE_STATE_VALUES, count)})
       UPDATE deliveries SET state = v.state, next_attempt_at = v.next_attempt_at, last_error = v.error, last_error_code = v.code,
         sent_at = CASE WHEN v.state = 'sent' THEN :now ELSE deliveries.sent_at END,
         message_id = CASE WHEN v.state = 'sent' THEN v.message_id ELSE deliveries.message_id END,
         lease_owner = NULL, lease_until = NULL, updated_at = :now
       FROM v WHERE deliveries.id = v.id`,
  ),
  releaseLeases: defineStatement<Time>(
    () => `UPDATE deliveries SET state = 'retrying', next_attempt_at = :now, lease_owner = NULL, lease_until = NULL, updated_at = :now
       WHERE state = 'sending'`,
  ),
  get: defineStatement<DeliveryId, DeliveryRow>(() => `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries WHERE id = :id`),
  getBody: defineStatement<DeliveryId, { body: Buffer }>(() => 'SELECT body FROM deliveries WHERE id = :id'),
  requeue: defineStatement<DeliveryId & Time>(
    () => `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = :now, lease_owner = NULL, lease_until = NULL,
         updated_at = :now WHERE id = :id AND state IN ('dead', 'sent')`,
  ),
  retryNow: defineStatement<DeliveryId & Time>(
    () => `UPDATE deliveries SET next_attempt_at = :now, updated_at = :now WHERE id = :id AND state = 'retrying'`,
  ),
  requeueAllDead: defineStatement<Time>(
    () => `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = :now, lease_owner = NULL, lease_until = NULL,
         updated_at = :now WHERE state = 'dead'`,
  ),
  /** "Try now": retries due by `until` (those waiting for the end of an SMTP pause) become due now, in their id order. */
  expediteRetries: defineStatement<{ now: number; until: number }>(
    () => `UPDATE deliveries SET next_attempt_at = :now WHERE state = 'retrying' AND next_attempt_at > :now AND next_attempt_at <= :until`,
  ),
  countByState: defineStatement<Record<string, never>, { state: DeliveryState; n: number }>(
    () => 'SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state',
  ),
  prune: defineStatement<{ state: 'sent' | 'dead'; before: number }>(
    () => 'DELETE FROM deliveries WHERE state = :state AND updated_at < :before',
  ),
  /** Run before `prune`, in its transaction: the kept mails and route decisions of the deliveries it deletes go with them. */
  pruneSentMessages: defineStatement<{ state: 'sent' | 'dead'; before: number }>(
    () => 'DELETE FROM sent_messages WHERE delivery_id IN (SELECT id FROM deliveries WHERE state = :state AND updated_at < :before)',
  ),
  pruneRouteMails: defineStatement<{ state: 'sent' | 'dead'; before: number }>(
    () => 'DELETE FROM route_mails WHERE delivery_id IN (SELECT id FROM deliveries WHERE state = :state AND updated_at < :before)',
  ),
  oldestPendingAt: defineStatement<Record<string, never>, TimeRow>(
    () => `SELECT MIN(received_at) AS t FROM deliveries WHERE state IN ('queued', 'sending', 'retrying')`,
  ),
  /** MIN over a UNION ALL rather than LEAST (PostgreSQL only) or min(a, b) (SQLite: null if either is). */
  nextDueAt: defineStatement<Record<string, never>, TimeRow>(
    () => `SELECT MIN(t) AS t FROM (
         SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE state IN ('queued', 'retrying')
         UNION ALL SELECT MIN(lease_until) FROM deliveries WHERE state = 'sending') AS due`,
  ),
  /** The watchdog's alerts and the digests are not reports. */
  lastReportReceivedAt: defineStatement<{ source: string }, TimeRow>(
    () => `SELECT MAX(received_at) AS t FROM deliveries WHERE netbox_source = :source AND kind = 'report'`,
  ),
  /** Held until commit on PostgreSQL, so that one replica's routing decisions are recorded whole; in id order, as every replica takes them. */
  lock: defineStatement<{ ids: number[] }, { id: number }>(
    (d) => `SELECT id FROM deliveries WHERE id ${d.inList(':ids')} ORDER BY id${d.forUpdate}`,
  ),
};

/** A place in a report series: the reports created before (createdMs, reportId). */
type ReportCursorParams = { series: string } & ReportCursor;

/** The reports of a series strictly before a cursor, newest first (ties on the creation time broken by report id). */
const BEFORE_IN_SERIES = `WHERE series = :series AND (created_ms < :createdMs OR (created_ms = :createdMs AND report_id < :reportId))
       ORDER BY created_ms DESC, report_id DESC`;

const reports = {
  /**
   * Reports' rows as their webhooks are stored (in the same transaction): counts known, failing set not yet,
   * so that a successor compares with them before their mails are composed. A report is late when a newer one
   * of its series is stored already: a range of the series' index from its creation time on (an OR of the two
   * orders read the whole series instead). Rows of one statement do not see each other (they arrived together).
   * A row already there (a webhook sent again) stays as it is. VALUES names its columns column1, column2, … in
   * both engines.
   */
  arrive: defineRowsStatement((count) => {
    const v = (column: string) => `v.column${ARRIVAL_COLUMNS.findIndex(([c]) => c === column) + 1}`;
    return `INSERT INTO reports (${ARRIVAL_COLUMNS.map(([column]) => column).join(', ')}, composed, arrived_late)
       SELECT ${ARRIVAL_COLUMNS.map(([column]) => v(column)).join(', ')}, 0,
         CASE WHEN EXISTS (SELECT 1 FROM reports r WHERE r.series = ${v('series')} AND r.created_ms >= ${v('created_ms')}
           AND (r.created_ms > ${v('created_ms')} OR r.report_id > ${v('report_id')})) THEN 1 ELSE 0 END
       FROM (VALUES ${buildValuesRows(
         ARRIVAL_COLUMNS.map(([, param, type]) => [param, type]),
         count,
       )}) AS v
       WHERE true ON CONFLICT (dedup_key) DO NOTHING`;
  }),
  /**
   * Composed reports' rows (each `ReportParams`). A retried report keeps the failing set it had when the
   * new one is unknown; its arrival stays as recorded.
   */
  save: defineRowsStatement(
    (count) => `INSERT INTO reports (${REPORT_COLUMNS.map(([column]) => column).join(', ')}, composed)
       VALUES ${buildValuesRows(
         REPORT_COLUMNS.map(([, param]) => [param]),
         count,
         '1',
       )}
       ON CONFLICT (dedup_key) DO UPDATE SET composed = 1, series = excluded.series, total_passed = excluded.total_passed,
         total_count = excluded.total_count, high_passed = excluded.high_passed, high_count = excluded.high_count,
         middle_passed = excluded.middle_passed, middle_count = excluded.middle_count, low_passed = excluded.low_passed,
         low_count = excluded.low_count, failing = COALESCE(excluded.failing, reports.failing),
         failing_ids = CASE WHEN excluded.failing IS NULL THEN reports.failing_ids ELSE excluded.failing_ids END,
         failing_count = COALESCE(excluded.failing_count, reports.failing_count), pair_states = excluded.pair_states`,
  ),
  /** Bounded history: the newest failing sets of the series stay, older ones become unknown. */
  forgetOldFailing: defineStatement<{ series: string }>(
    () => `UPDATE reports SET failing = NULL, failing_ids = NULL, failing_count = NULL, pair_states = NULL
       WHERE series = :series AND failing IS NOT NULL AND dedup_key NOT IN (
         SELECT dedup_key FROM reports WHERE series = :series ORDER BY created_ms DESC, report_id DESC LIMIT ${REPORT_FAILING_SETS_KEPT})`,
  ),
  get: defineStatement<{ dedupKey: string }, ReportRow>(() => 'SELECT * FROM reports WHERE dedup_key = :dedupKey'),
  ofKeys: defineStatement<{ dedupKeys: string[] }, ReportRow>((d) => `SELECT * FROM reports WHERE dedup_key ${d.inList(':dedupKeys')}`),
  findBefore: defineStatement<ReportCursorParams, ReportRow>(() => `SELECT * FROM reports ${BEFORE_IN_SERIES} LIMIT 1`),
  /** The same report without its failing pairs' NetBox ids (the trend's walk past the previous report). */
  findBeforeWithoutIds: defineStatement<ReportCursorParams, ReportRow>(
    () => `SELECT ${REPORT_POINT_COLUMNS}, failing, NULL AS failing_ids FROM reports ${BEFORE_IN_SERIES} LIMIT 1`,
  ),
  /** The newest `limit` reports of a series before (createdMs, reportId), newest first (the mail's trend chart). */
  /** Counts only: the failing sets are left where they are (see ReportPoint). */
  listBefore: defineStatement<ReportCursorParams & { limit: number }, ReportPointRow>(
    () => `SELECT ${REPORT_POINT_COLUMNS} FROM reports ${BEFORE_IN_SERIES} LIMIT :limit`,
  ),
};

const sentMessages = {
  /** One copy per (delivery, route): the latest send of a route's mail (a deliberate resend) replaces the earlier one. */
  save: defineRowsStatement(
    (count) => `INSERT INTO sent_messages (delivery_id, ${SENT_MESSAGE_COLUMNS})
       VALUES ${buildValuesRows(SENT_MESSAGE_VALUES, count)}
       ON CONFLICT (delivery_id, route) DO UPDATE SET message_id = excluded.message_id, raw = excluded.raw,
         envelope_from = excluded.envelope_from, envelope_to = excluded.envelope_to, subject = excluded.subject,
         text_part = excluded.text_part, html_part = excluded.html_part, response = excluded.response, sent_at = excluded.sent_at`,
  ),
  get: defineStatement<{ deliveryId: number; route: string }, SentMessageRow>(
    () => `SELECT ${SENT_MESSAGE_COLUMNS} FROM sent_messages WHERE delivery_id = :deliveryId AND route = :route`,
  ),
  ofDelivery: defineStatement<{ deliveryId: number }, SentMessageRow>(
    () => `SELECT ${SENT_MESSAGE_COLUMNS} FROM sent_messages WHERE delivery_id = :deliveryId ORDER BY sent_at, route`,
  ),
};

const watchdog = {
  /** A NetBox source's row, created `ok` on first use; a replica that loses the race keeps the winner's. */
  ensure: defineStatement<Time & { source: string }>(
    () =>
      `INSERT INTO watchdog_states (source, state, since, created_at, changed_at, version) VALUES (:source, 'ok', NULL, :now, :now, 0) ON CONFLICT (source) DO NOTHING`,
  ),
  get: defineStatement<{ source: string }, WatchdogRow>(
    () => 'SELECT state, since, created_at, changed_at, version FROM watchdog_states WHERE source = :source',
  ),
  /** Compare-and-set on the version: under READ COMMITTED a concurrent UPDATE waits for the winner's commit, then finds the version moved. */
  transition: defineStatement<{ source: string; state: string; since: number | null; now: number; expectedVersion: number }>(
    () =>
      'UPDATE watchdog_states SET state = :state, since = :since, changed_at = :now, version = version + 1 WHERE source = :source AND version = :expectedVersion',
  ),
};

const DIGEST_PERIOD_COLUMNS = 'route, period_start, period_end, delivery_id, late, queued_at';

const digests = {
  /** DO NOTHING on either key: a period already queued (by another replica, before a restart) stays as it was. */
  insert: defineStatement<{ route: string; periodStart: number; periodEnd: number; late: number; now: number }>(
    () => `INSERT INTO digest_periods (${DIGEST_PERIOD_COLUMNS}) VALUES (:route, :periodStart, :periodEnd, NULL, :late, :now)
       ON CONFLICT DO NOTHING`,
  ),
  attach: defineStatement<{ route: string; periodStart: number; deliveryId: number }>(
    () => 'UPDATE digest_periods SET delivery_id = :deliveryId WHERE route = :route AND period_start = :periodStart',
  ),
  last: defineStatement<{ route: string }, DigestPeriodRow>(
    () => `SELECT ${DIGEST_PERIOD_COLUMNS} FROM digest_periods WHERE route = :route ORDER BY period_end DESC LIMIT 1`,
  ),
  list: defineStatement<{ limit: number }, DigestPeriodRow>(
    () => `SELECT ${DIGEST_PERIOD_COLUMNS} FROM digest_periods ORDER BY period_end DESC, route LIMIT :limit`,
  ),
  listOfRoute: defineStatement<{ route: string; limit: number }, DigestPeriodRow>(
    () => `SELECT ${DIGEST_PERIOD_COLUMNS} FROM digest_periods WHERE route = :route ORDER BY period_end DESC LIMIT :limit`,
  ),
};

const routeMails = {
  /** Which of these deliveries have a route plan recorded. */
  planned: defineStatement<{ deliveryIds: number[] }, { delivery_id: number }>(
    (d) => `SELECT DISTINCT delivery_id FROM route_mails WHERE delivery_id ${d.inList(':deliveryIds')}`,
  ),
  /** Routing decisions (each `RouteMailParams`), decided at `:now`. DO NOTHING keeps the first replica's decision for a route when two decide at once. */
  insert: defineRowsStatement(
    (count) => `INSERT INTO route_mails (
         delivery_id, route, position, outcome, reason, reminder, state, owner_group, decided_at, updated_at)
       VALUES ${buildValuesRows(ROUTE_MAIL_VALUES, count, ':now, :now')} ON CONFLICT (delivery_id, route) DO NOTHING`,
  ),
  ofDelivery: defineStatement<{ deliveryId: number }, RouteMailRow>(
    () => 'SELECT * FROM route_mails WHERE delivery_id = :deliveryId ORDER BY position, route',
  ),
  ofDeliveries: defineStatement<{ deliveryIds: number[] }, RouteMailRow>(
    (d) => `SELECT * FROM route_mails WHERE delivery_id ${d.inList(':deliveryIds')} ORDER BY delivery_id, position, route`,
  ),
  /**
   * What route mails came to at `:now`, one row each (`RouteOutcomeRow`): sent (with its Message-ID and
   * the server's answer), or failed for good or for now with its error. A mail already sent stays sent.
   */
  settle: defineRowsStatement(
    (
      count,
    ) => `WITH v (delivery_id, route, state, message_id, response, error, code) AS (VALUES ${buildValuesRows(ROUTE_OUTCOME_VALUES, count)})
       UPDATE route_mails SET state = v.state, message_id = COALESCE(v.message_id, route_mails.message_id),
         response = COALESCE(v.response, route_mails.response), sent_at = CASE WHEN v.state = 'sent' THEN :now ELSE route_mails.sent_at END,
         last_error = v.error, last_error_code = v.code, updated_at = :now
       FROM v WHERE route_mails.delivery_id = v.delivery_id AND route_mails.route = v.route AND (v.state = 'sent' OR route_mails.state <> 'sent')`,
  ),
  /** What `repeat_after` measures from: the newest report created before this one that the route mailed. */
  lastCompletedAt: defineStatement<{ route: string; routeGroups: string; deliveryId: number }, { t: string }>(
    () => `SELECT d.completed_at AS t FROM route_mails r JOIN deliveries d ON d.id = r.delivery_id
       WHERE (r.route = :route OR r.route LIKE :routeGroups ESCAPE '!') AND r.outcome = 'send' AND r.delivery_id <> :deliveryId
         AND d.netbox_source = (SELECT netbox_source FROM deliveries WHERE id = :deliveryId)
         AND d.report_created <= (SELECT report_created FROM deliveries WHERE id = :deliveryId)
       ORDER BY d.report_created DESC, d.id DESC LIMIT 1`,
  ),
};

const health = {
  /** A write, not a SELECT: a read-only file or standby, or a full disk, must fail the readiness check. */
  probe: defineStatement<Time>(() => 'INSERT INTO health_probe (id, at) VALUES (1, :now) ON CONFLICT (id) DO UPDATE SET at = excluded.at'),
};

/** The statements of both engines, by table. */
export const queries = { deliveries, reports, sentMessages, watchdog, digests, routeMails, health };

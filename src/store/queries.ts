import { deliveries, type Time } from './delivery-rows';
import { ARRIVAL_COLUMNS, REPORT_COLUMNS, REPORT_POINT_COLUMNS, type ReportPointRow, type ReportRow } from './report-rows';
import { COUNT_FIELDS } from '../report';
import type { ReportCursor } from '../trend';
import {
  buildValuesRows,
  buildValuesTable,
  defineFilteredStatement,
  defineRowsStatement,
  selectAs,
  Statement,
  toValuesCells,
  type ValuesCell,
} from './statement';
import { WAIVER_EXPIRING_DAYS, DAY_MS, type NewWaiver, type Waiver, type WaiverFilter } from '../waivers';
import {
  REPORT_FAILING_SETS_KEPT,
  type CatchUpState,
  type DigestPeriod,
  type NewRouteMail,
  type OwnerGroupPlan,
  type RouteMailOutcome,
  type RouteMailRecord,
  type SentMessage,
  type SentMessageCopy,
  type WatchdogState,
} from './types';

type ReportCursorParams = { series: string } & ReportCursor;

/** Ties on creation broken by report id, as one row-value range of the series' index (an OR read the whole backlog). */
const BEFORE_IN_SERIES = `WHERE series = :series AND (created_ms, report_id) < (:createdMs, :reportId)
       ORDER BY created_ms DESC, report_id DESC`;

const reports = {
  /**
   * Written with the webhook, so a successor compares with it before its mail is composed. Late: two index seeks
   * (one row-value range reads every report sharing the created_ms). VALUES' columns are column1, … on both engines.
   */
  arrive: defineRowsStatement((count) => {
    const v = (column: string) => `v.column${ARRIVAL_COLUMNS.findIndex(([c]) => c === column) + 1}`;
    return `INSERT INTO reports (${ARRIVAL_COLUMNS.map(([column]) => column).join(', ')}, composed, arrived_late)
       SELECT ${ARRIVAL_COLUMNS.map(([column]) => v(column)).join(', ')}, 0,
         CASE WHEN EXISTS (SELECT 1 FROM reports r WHERE r.series = ${v('series')} AND r.created_ms > ${v('created_ms')})
           OR EXISTS (SELECT 1 FROM reports r WHERE r.series = ${v('series')} AND r.created_ms = ${v('created_ms')}
             AND r.report_id > ${v('report_id')}) THEN 1 ELSE 0 END
       FROM (VALUES ${buildValuesRows(ARRIVAL_COLUMNS, count)}) AS v WHERE true ON CONFLICT (dedup_key) DO NOTHING`;
  }),
  save: defineRowsStatement(
    (count) => `INSERT INTO reports (${REPORT_COLUMNS.join(', ')}, composed)
       VALUES ${buildValuesRows(
         REPORT_COLUMNS.map((column): ValuesCell => [column]),
         count,
         '1',
       )}
       ON CONFLICT (dedup_key) DO UPDATE SET composed = 1, ${['series', ...COUNT_FIELDS].map((c) => `${c} = excluded.${c}`).join(', ')},
         failing = COALESCE(excluded.failing, reports.failing),
         failing_ids = CASE WHEN excluded.failing IS NULL THEN reports.failing_ids ELSE excluded.failing_ids END,
         failing_count = COALESCE(excluded.failing_count, reports.failing_count), pair_states = excluded.pair_states`,
  ),
  forgetOldFailing: new Statement<{ series: string }>(
    () => `UPDATE reports SET failing = NULL, failing_ids = NULL, failing_count = NULL, pair_states = NULL
       WHERE series = :series AND failing IS NOT NULL AND dedup_key NOT IN (
         SELECT dedup_key FROM reports WHERE series = :series ORDER BY created_ms DESC, report_id DESC LIMIT ${REPORT_FAILING_SETS_KEPT})`,
  ),
  ofKeys: new Statement<{ dedupKeys: string[] }, ReportRow>((d) => `SELECT * FROM reports WHERE dedup_key ${d.inList(':dedupKeys')}`),
  findBefore: new Statement<ReportCursorParams, ReportRow>(() => `SELECT * FROM reports ${BEFORE_IN_SERIES} LIMIT 1`),
  /** The same report without its failing pairs' NetBox ids (the trend's walk past the previous report). */
  findBeforeWithoutIds: new Statement<ReportCursorParams, ReportRow>(
    () => `SELECT ${REPORT_POINT_COLUMNS}, failing, NULL AS failing_ids FROM reports ${BEFORE_IN_SERIES} LIMIT 1`,
  ),
  listBefore: new Statement<ReportCursorParams & { limit: number }, ReportPointRow>(
    () => `SELECT ${REPORT_POINT_COLUMNS} FROM reports ${BEFORE_IN_SERIES} LIMIT :limit`,
  ),
};

/** The parts are set only on rows kept before the raw copy alone was kept. */
export type SentMessageRow = Omit<SentMessageCopy, 'envelopeTo'> & { envelopeTo: string; textPart: string | null; htmlPart: string | null };

export const SENT_MESSAGE_WRITTEN = 'route, message_id, raw, envelope_from, envelope_to, subject, response, sent_at';
export const SENT_MESSAGE_FIELDS = selectAs(`${SENT_MESSAGE_WRITTEN}, text_part, html_part`);

export function toSentMessageParams(deliveryId: number, m: SentMessageCopy) {
  return { ...m, deliveryId, envelopeTo: JSON.stringify(m.envelopeTo) };
}

/**
 * The kept mail with its parts: those stored beside an older copy, else decoded from the raw copy by mailparser (loaded
 * lazily) as they were before encoding: `cid:` links kept, no part made from the other.
 */
export async function fromSentMessageRow(row: SentMessageRow): Promise<SentMessage> {
  const { textPart, htmlPart, envelopeTo, ...copy } = row;
  const message = { ...copy, envelopeTo: JSON.parse(envelopeTo) as string[] };
  if (textPart !== null || htmlPart !== null) return { ...message, text: textPart, html: htmlPart };
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(row.raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  return { ...message, text: parsed.text ?? null, html: typeof parsed.html === 'string' ? parsed.html : null };
}

const sentMessages = {
  save: defineRowsStatement(
    (count) => `INSERT INTO sent_messages (delivery_id, ${SENT_MESSAGE_WRITTEN})
       VALUES ${buildValuesRows(toValuesCells(`delivery_id, ${SENT_MESSAGE_WRITTEN}`), count)}
       ON CONFLICT (delivery_id, route) DO UPDATE SET message_id = excluded.message_id, raw = excluded.raw,
         envelope_from = excluded.envelope_from, envelope_to = excluded.envelope_to, subject = excluded.subject,
         text_part = NULL, html_part = NULL, response = excluded.response, sent_at = excluded.sent_at`,
  ),
  get: new Statement<{ deliveryId: number; route: string }, SentMessageRow>(
    () => `SELECT ${SENT_MESSAGE_FIELDS} FROM sent_messages WHERE delivery_id = :deliveryId AND route = :route`,
  ),
  ofDelivery: new Statement<{ deliveryId: number }, SentMessageRow>(
    () => `SELECT ${SENT_MESSAGE_FIELDS} FROM sent_messages WHERE delivery_id = :deliveryId ORDER BY sent_at, route`,
  ),
};

const watchdog = {
  ensure: new Statement<Time & { source: string }>(
    () =>
      `INSERT INTO watchdog_states (source, state, since, created_at, changed_at, version) VALUES (:source, 'ok', NULL, :now, :now, 0) ON CONFLICT (source) DO NOTHING`,
  ),
  get: new Statement<{ source: string }, WatchdogState>(
    () => `SELECT ${selectAs('state, since, created_at, changed_at, version')} FROM watchdog_states WHERE source = :source`,
  ),
  /** Compare-and-set on the version: under READ COMMITTED a concurrent UPDATE waits for the winner's commit, then finds the version moved. */
  transition: new Statement<{ source: string; state: string; since: number | null; now: number; expectedVersion: number }>(
    () =>
      'UPDATE watchdog_states SET state = :state, since = :since, changed_at = :now, version = version + 1 WHERE source = :source AND version = :expectedVersion',
  ),
};

const DIGEST_PERIOD_COLUMNS = 'route, period_start, period_end, delivery_id, late, queued_at';
const DIGEST_PERIOD_FIELDS = selectAs(DIGEST_PERIOD_COLUMNS);

type DigestPeriodRow = Omit<DigestPeriod, 'late'> & { late: number };

const digests = {
  list: defineFilteredStatement<'route', { route?: string; limit: number }, DigestPeriodRow>(
    { route: 'route = :route' },
    (where) => `SELECT ${DIGEST_PERIOD_FIELDS} FROM digest_periods ${where} ORDER BY period_end DESC, route LIMIT :limit`,
  ),
  insert: new Statement<{ route: string; periodStart: number; periodEnd: number; late: number; now: number }>(
    () => `INSERT INTO digest_periods (${DIGEST_PERIOD_COLUMNS}) VALUES (:route, :periodStart, :periodEnd, NULL, :late, :now)
       ON CONFLICT DO NOTHING`,
  ),
  attach: new Statement<{ route: string; periodStart: number; deliveryId: number }>(
    () => 'UPDATE digest_periods SET delivery_id = :deliveryId WHERE route = :route AND period_start = :periodStart',
  ),
};

/** Only `reminder` differs between the engines (SQLite 0/1, PostgreSQL boolean). */
export type RouteMailRow = Omit<RouteMailRecord, 'reminder' | 'ownerGroup'> & { reminder: boolean | number; ownerGroup: string | null };

export const ROUTE_MAIL_FIELDS = selectAs(
  'delivery_id, route, position, outcome, reason, reminder, state, message_id, response, last_error, last_error_code, sent_at, decided_at, updated_at, owner_group',
);

export const ROUTE_MAIL_WRITTEN = 'delivery_id, route, position, outcome, reason, reminder, state, owner_group';

/** A `send` starts `pending`, the other outcomes are final. */
export function toRouteMailParams(deliveryId: number, decision: NewRouteMail) {
  const { outcome, ownerGroup } = decision;
  return {
    ...decision,
    deliveryId,
    state: outcome === 'send' ? 'pending' : outcome,
    ownerGroup: ownerGroup ? JSON.stringify(ownerGroup) : null,
  };
}

export function toRouteOutcomeRow(deliveryId: number, outcome: RouteMailOutcome) {
  return { deliveryId, messageId: null, response: null, error: null, code: null, ...outcome };
}

export function decodeRouteMailRow(row: RouteMailRow): RouteMailRecord {
  const ownerGroup = row.ownerGroup ? (JSON.parse(row.ownerGroup) as OwnerGroupPlan) : null;
  return { ...row, reminder: row.reminder === true || row.reminder === 1, ownerGroup };
}

const routeMails = {
  planned: new Statement<{ deliveryIds: number[] }, { delivery_id: number }>(
    (d) => `SELECT DISTINCT delivery_id FROM route_mails WHERE delivery_id ${d.inList(':deliveryIds')}`,
  ),
  /** DO NOTHING keeps the first replica's decision for a route when two decide at once. */
  insert: defineRowsStatement(
    (count) => `INSERT INTO route_mails (${ROUTE_MAIL_WRITTEN}, decided_at, updated_at)
       VALUES ${buildValuesRows(toValuesCells(ROUTE_MAIL_WRITTEN), count, ':now, :now')} ON CONFLICT (delivery_id, route) DO NOTHING`,
  ),
  ofDeliveries: new Statement<{ deliveryIds: number[] }, RouteMailRow>(
    (d) =>
      `SELECT ${ROUTE_MAIL_FIELDS} FROM route_mails WHERE delivery_id ${d.inList(':deliveryIds')} ORDER BY delivery_id, position, route`,
  ),
  settle: defineRowsStatement(
    (
      count,
    ) => `WITH ${buildValuesTable('delivery_id BIGINT, route TEXT, state TEXT, message_id TEXT, response TEXT, error TEXT, code TEXT', count)}
       UPDATE route_mails SET state = v.state, message_id = COALESCE(v.message_id, route_mails.message_id),
         response = COALESCE(v.response, route_mails.response), sent_at = CASE WHEN v.state = 'sent' THEN :now ELSE route_mails.sent_at END,
         last_error = v.error, last_error_code = v.code, updated_at = :now
       FROM v WHERE route_mails.delivery_id = v.delivery_id AND route_mails.route = v.route AND (v.state = 'sent' OR route_mails.state <> 'sent')`,
  ),
  lastCompletedAt: new Statement<{ route: string; routeGroups: string; deliveryId: number }, { t: string }>(
    () => `SELECT d.completed_at AS t FROM route_mails r JOIN deliveries d ON d.id = r.delivery_id
       WHERE (r.route = :route OR r.route LIKE :routeGroups ESCAPE '!') AND r.outcome = 'send' AND r.delivery_id <> :deliveryId
         AND d.netbox_source = (SELECT netbox_source FROM deliveries WHERE id = :deliveryId)
         AND d.report_created <= (SELECT report_created FROM deliveries WHERE id = :deliveryId)
       ORDER BY d.report_created DESC, d.id DESC LIMIT 1`,
  ),
};

const health = {
  /** A write, not a SELECT: a read-only file or standby, or a full disk, must fail the readiness check. */
  probe: new Statement<Time>(() => 'INSERT INTO health_probe (id, at) VALUES (1, :now) ON CONFLICT (id) DO UPDATE SET at = excluded.at'),
};

type CatchUpRow = { createdMs: number | null; reportId: number | null; succeededAt: number | null };
const CATCH_UP_COLUMNS = 'seen_created_ms AS "createdMs", seen_report_id AS "reportId", succeeded_at AS "succeededAt"';

const catchUp = {
  /** The lease moves to `owner` only when expired (or its own); a losing replica gets no row (PostgreSQL waits for the winner). */
  takeLease: new Statement<{ source: string; owner: string; now: number; until: number }, CatchUpRow>(
    () => `INSERT INTO catch_up_sources (source, lease_owner, lease_until) VALUES (:source, :owner, :until)
       ON CONFLICT (source) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
       WHERE catch_up_sources.lease_until <= :now OR catch_up_sources.lease_owner = :owner
       RETURNING ${CATCH_UP_COLUMNS}`,
  ),
  succeed: new Statement<{ source: string; owner: string; now: number; createdMs: number; reportId: number }>(
    () => `UPDATE catch_up_sources SET seen_created_ms = :createdMs, seen_report_id = :reportId, succeeded_at = :now,
         lease_owner = NULL, lease_until = 0 WHERE source = :source AND lease_owner = :owner`,
  ),
  release: new Statement<{ source: string; owner: string }>(
    () => 'UPDATE catch_up_sources SET lease_owner = NULL, lease_until = 0 WHERE source = :source AND lease_owner = :owner',
  ),
  get: new Statement<{ source: string }, CatchUpRow>(() => `SELECT ${CATCH_UP_COLUMNS} FROM catch_up_sources WHERE source = :source`),
  /** Report ids grow with creation in one NetBox: the highest stored is the newest the relay received. */
  newestStoredReport: new Statement<{ source: string }, { reportId: number; created: string }>(
    () => `SELECT report_id AS "reportId", report_created AS created FROM deliveries WHERE netbox_source = :source AND kind = 'report'
       ORDER BY report_id DESC LIMIT 1`,
  ),
  storedReportIds: new Statement<{ source: string; afterId: number; uptoId: number }, { report_id: number }>(
    () => `SELECT report_id FROM deliveries WHERE netbox_source = :source AND kind = 'report' AND report_id > :afterId
       AND report_id <= :uptoId`,
  ),
  knownKeys: new Statement<{ keys: string[] }, { dedup_key: string }>(
    (d) => `SELECT dedup_key FROM deliveries WHERE dedup_key ${d.inList(':keys')}
       UNION SELECT dedup_key FROM reports WHERE dedup_key ${d.inList(':keys')}`,
  ),
};

export function decodeCatchUpRow({ createdMs, reportId, succeededAt }: CatchUpRow): CatchUpState {
  return { seen: createdMs === null ? null : { createdMs, reportId: reportId ?? 0 }, succeededAt };
}

/** A stored waiver as its record: the id as text (a file's waivers have ids of their own), `until_day` as `until`. */
const WAIVER_FIELDS = `CAST(id AS TEXT) AS id, 'store' AS origin, until_day AS until, ${selectAs('source, test, device, ends_at, reason, author, created_at, expired_at, expired_by')}`;

/** The same rules as matchesFilter's in memory. */
const WAIVER_CONDITIONS = {
  source: 'source = :source',
  test: 'test = :test',
  device: 'device = :device',
  endedSince: 'ends_at > :endedSince',
  active: 'ends_at > :at',
  expiring: 'ends_at > :at AND ends_at <= :soon',
  expired: 'ends_at <= :at',
} as const;

type WaiverCondition = keyof typeof WAIVER_CONDITIONS;
type WaiverListParams = WaiverFilter & { limit: number; soon: number };

const listWaivers = defineFilteredStatement<WaiverCondition, WaiverListParams, Waiver>(
  WAIVER_CONDITIONS,
  (where) => `SELECT ${WAIVER_FIELDS} FROM waivers ${where} ORDER BY id DESC LIMIT :limit`,
);

export function selectListWaivers(filter: WaiverFilter): { statement: Statement<WaiverListParams, Waiver>; params: WaiverListParams } {
  const present = (['source', 'test', 'device', 'endedSince'] as const).filter((name) => filter[name] !== undefined) as WaiverCondition[];
  if (filter.status) present.push(filter.status);
  const params = { ...filter, limit: filter.limit ?? 500, soon: filter.at + WAIVER_EXPIRING_DAYS * DAY_MS };
  return { statement: listWaivers(present), params };
}

/** Nothing here deletes a waiver. */
const waivers = {
  insert: new Statement<NewWaiver, Waiver>(
    () => `INSERT INTO waivers (source, test, device, until_day, ends_at, reason, author, created_at)
       VALUES (:source, :test, :device, :until, :endsAt, :reason, :author, :createdAt) RETURNING ${WAIVER_FIELDS}`,
  ),
  get: new Statement<{ id: number }, Waiver>(() => `SELECT ${WAIVER_FIELDS} FROM waivers WHERE id = :id`),
  /** Only a waiver still in force ends: one already over keeps its end and who ended it. */
  expire: new Statement<{ id: number; now: number; by: string }, Waiver>(
    () => `UPDATE waivers SET ends_at = :now, expired_at = :now, expired_by = :by WHERE id = :id AND ends_at > :now
       RETURNING ${WAIVER_FIELDS}`,
  ),
  countInForce: new Statement<{ at: number }, { n: number }>(
    () => 'SELECT COUNT(*) AS n FROM waivers WHERE created_at <= :at AND ends_at > :at',
  ),
};

export const queries = { deliveries, reports, sentMessages, watchdog, digests, routeMails, health, catchUp, waivers };

import { WAIVER_EXPIRING_DAYS, DAY_MS, type NewWaiver, type Waiver, type WaiverFilter } from '../waivers';
import { defineFilteredStatement, defineStatement, type Statement } from './statement';

/** A `waivers` row as both engines read it. */
export interface WaiverRow {
  id: number;
  source: string;
  test: string;
  device: string | null;
  until_day: string;
  ends_at: number;
  reason: string;
  author: string;
  created_at: number;
  expired_at: number | null;
  expired_by: string | null;
}

const WAIVER_COLUMNS = 'id, source, test, device, until_day, ends_at, reason, author, created_at, expired_at, expired_by';

export function decodeWaiverRow(row: WaiverRow): Waiver {
  return {
    id: String(row.id),
    origin: 'store',
    source: row.source,
    test: row.test,
    device: row.device,
    until: row.until_day,
    endsAt: Number(row.ends_at),
    reason: row.reason,
    author: row.author,
    createdAt: Number(row.created_at),
    expiredAt: row.expired_at === null ? null : Number(row.expired_at),
    expiredBy: row.expired_by,
  };
}

/** The condition each filter adds, named by the parameter it binds (see matchesFilter for the same rules in memory). */
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
type WaiverListParams = Record<string, string | number>;

const listWaivers = defineFilteredStatement<WaiverCondition, WaiverListParams, WaiverRow>(
  WAIVER_CONDITIONS,
  (where) => `SELECT ${WAIVER_COLUMNS} FROM waivers ${where} ORDER BY id DESC LIMIT :limit`,
);

/** The listing statement for a filter and its parameters: newest first. */
export function selectListWaivers(filter: WaiverFilter): { statement: Statement<WaiverListParams, WaiverRow>; params: WaiverListParams } {
  const present = (['source', 'test', 'device', 'endedSince'] as const).filter((name) => filter[name] !== undefined) as WaiverCondition[];
  if (filter.status) present.push(filter.status);
  const statement = listWaivers(present);
  const params: WaiverListParams = { limit: filter.limit ?? 500 };
  for (const name of ['source', 'test', 'device', 'endedSince'] as const) if (filter[name] !== undefined) params[name] = filter[name];
  if (filter.status) params.at = filter.at;
  if (filter.status === 'expiring') params.soon = filter.at + WAIVER_EXPIRING_DAYS * DAY_MS;
  return { statement, params };
}

/** The statements of the `waivers` table, for both stores. Nothing here deletes a row. */
export const waiverQueries = {
  insert: defineStatement<NewWaiver, WaiverRow>(
    () => `INSERT INTO waivers (source, test, device, until_day, ends_at, reason, author, created_at)
       VALUES (:source, :test, :device, :until, :endsAt, :reason, :author, :createdAt) RETURNING ${WAIVER_COLUMNS}`,
  ),
  get: defineStatement<{ id: number }, WaiverRow>(() => `SELECT ${WAIVER_COLUMNS} FROM waivers WHERE id = :id`),
  /** Only a waiver still in force ends: one already over keeps its end and who ended it. */
  expire: defineStatement<{ id: number; now: number; by: string }, WaiverRow>(
    () => `UPDATE waivers SET ends_at = :now, expired_at = :now, expired_by = :by WHERE id = :id AND ends_at > :now
       RETURNING ${WAIVER_COLUMNS}`,
  ),
  countInForce: defineStatement<{ at: number }, { n: number }>(
    () => 'SELECT COUNT(*) AS n FROM waivers WHERE created_at <= :at AND ends_at > :at',
  ),
};

import { WAIVER_EXPIRING_DAYS, DAY_MS, type NewWaiver, type Waiver, type WaiverFilter } from '../waivers';
import { defineFilteredStatement, selectAs, Statement } from './statement';

/** A stored waiver as its record: the id as text (a file's waivers have ids of their own), `until_day` as `until`. */
const WAIVER_FIELDS = `CAST(id AS TEXT) AS id, 'store' AS origin, until_day AS until, ${selectAs('source, test, device, ends_at, reason, author, created_at, expired_at, expired_by')}`;

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
type WaiverListParams = WaiverFilter & { limit: number; soon: number };

const listWaivers = defineFilteredStatement<WaiverCondition, WaiverListParams, Waiver>(
  WAIVER_CONDITIONS,
  (where) => `SELECT ${WAIVER_FIELDS} FROM waivers ${where} ORDER BY id DESC LIMIT :limit`,
);

/** The listing statement for a filter and its parameters: newest first. */
export function selectListWaivers(filter: WaiverFilter): { statement: Statement<WaiverListParams, Waiver>; params: WaiverListParams } {
  const present = (['source', 'test', 'device', 'endedSince'] as const).filter((name) => filter[name] !== undefined) as WaiverCondition[];
  if (filter.status) present.push(filter.status);
  const params = { ...filter, limit: filter.limit ?? 500, soon: filter.at + WAIVER_EXPIRING_DAYS * DAY_MS };
  return { statement: listWaivers(present), params };
}

/** The statements of the `waivers` table, for both stores. Nothing here deletes a row. */
export const waiverQueries = {
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

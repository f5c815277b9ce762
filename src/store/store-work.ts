import { buildArriveReports, buildInsertDeliveries, queries, toArrivalsParams, toInsertParams } from './queries';
import { findMissingKeys, resolveInsertResults, toDeliveryParams } from './delivery-rows';
import { hasArrival, toArrivalParams } from './report-rows';
import { buildPlanStatements, buildSettlementStatements } from './settle-statements';
import type { Statement } from './statement';
import type { InsertResult, NewDelivery, SettledBatch } from './types';

/** What a step asks of the engine: every row, the first row, or how many rows the statement changed. */
type StepResult = 'rows' | 'row' | 'count';

/** One statement of a piece of store work, with what it binds. */
interface Step {
  statement: Statement<object, unknown>;
  params: object;
  result: StepResult;
}

/**
 * A piece of store logic, written once for both engines: it yields its statements one at a time and
 * receives each one's result. SQLite runs it to the end synchronously (better-sqlite3's transactions
 * and the group commit cannot span an `await`); PostgreSQL awaits each statement. The logic never
 * sees which.
 */
export type Work<T> = Generator<Step, T, unknown>;

/** Every row of a query (or of a write's RETURNING). */
export function* selectAll<P extends object, R>(statement: Statement<P, R>, params: P): Work<R[]> {
  return (yield { statement: statement, params, result: 'rows' }) as R[];
}

/** The first row of a query, if any. */
export function* selectOne<P extends object, R>(statement: Statement<P, R>, params: P): Work<R | undefined> {
  return (yield { statement: statement, params, result: 'row' }) as R | undefined;
}

/** Runs a statement; returns how many rows it changed. */
export function* execute<P extends object>(statement: Statement<P, unknown>, params: P): Work<number> {
  return (yield { statement: statement, params, result: 'count' }) as number;
}

/** Inserts one delivery, or finds the one stored with its key; with its report's arrival row. */
export function* insertDelivery(delivery: NewDelivery): Work<InsertResult> {
  const inserted = yield* selectOne(queries.deliveries.insert, toDeliveryParams(delivery));
  if (inserted) {
    if (hasArrival(delivery)) yield* execute(queries.reports.arrive, toArrivalsParams([toArrivalParams(delivery.report, delivery.series)]));
    return { id: inserted.id, duplicate: false };
  }
  return { id: (yield* selectOne(queries.deliveries.findIdsByKey, { keys: [delivery.dedupKey] }))!.id, duplicate: true };
}

/**
 * Inserts deliveries in one statement (a key repeated in the batch, or already stored, is not
 * inserted again) and looks up the ids of those that were already there.
 */
export function* insertDeliveries(deliveries: NewDelivery[]): Work<InsertResult[]> {
  const inserted = yield* selectAll(buildInsertDeliveries(deliveries.length), toInsertParams(deliveries));
  const missing = findMissingKeys(deliveries, inserted);
  const existing = missing.length > 0 ? yield* selectAll(queries.deliveries.findIdsByKey, { keys: missing }) : [];
  const results = resolveInsertResults(deliveries, inserted, existing);
  const arrivals = deliveries.flatMap((d, i) => (!results[i].duplicate && hasArrival(d) ? [toArrivalParams(d.report, d.series)] : []));
  if (arrivals.length > 0) yield* execute(buildArriveReports(arrivals.length), toArrivalsParams(arrivals));
  return results;
}

/**
 * Writes what one batch of attempts came to, a statement per kind of row rather than per delivery.
 * `locksRows`: the planned deliveries' rows are locked before their plans are checked, so that each
 * whole plan comes from one replica should two settle it at once (SQLite's write transaction is
 * exclusive already); the check is a statement of its own, so that it sees what a replica that held
 * the lock before committed.
 */
export function* settleBatch(batch: SettledBatch, locksRows: boolean): Work<void> {
  const planning = batch.deliveries.filter((d) => d.plan);
  if (planning.length > 0) {
    const ids = planning.map((d) => d.id);
    if (locksRows) yield* execute(queries.deliveries.lock, { ids });
    const planned = new Set((yield* selectAll(queries.routeMails.planned, { deliveryIds: ids })).map((r) => r.delivery_id));
    for (const s of buildPlanStatements(
      planning.filter((d) => !planned.has(d.id)),
      batch.now,
    ))
      yield* execute(s.statement, s.params);
  }
  for (const s of buildSettlementStatements(batch)) yield* execute(s.statement, s.params);
}

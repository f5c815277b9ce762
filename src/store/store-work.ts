import { queries, toRouteMailParams, toRouteOutcomeRow, toSentMessageParams } from './queries';
import { toDeliveryParams, toSettleStateRow } from './delivery-rows';
import { buildReportSnapshot } from '../trend';
import { hasArrival, toReportRow } from './report-rows';
import { toRowsParams, type Statement } from './statement';
import { StorageUnavailableError, type InsertResult, type NewDelivery, type SettledBatch } from './types';

interface Step {
  statement: Statement<object, unknown>;
  params: object;
  result: 'rows' | 'count';
}

/** Store logic yielding its statements one at a time: SQLite runs it synchronously (no `await` in a transaction), PostgreSQL awaits each. */
export type Work<T> = Generator<Step, T, unknown>;

export function* selectAll<P extends object, R>(statement: Statement<P, R>, params: P): Work<R[]> {
  return (yield { statement, params, result: 'rows' }) as R[];
}

export function* selectOne<P extends object, R>(statement: Statement<P, R>, params: P): Work<R | undefined> {
  return (yield* selectAll(statement, params))[0];
}

export function* execute<P extends object>(statement: Statement<P, unknown>, params: P): Work<number> {
  return (yield { statement, params, result: 'count' }) as number;
}

export function* insertDelivery(delivery: NewDelivery): Work<InsertResult> {
  return (yield* insertDeliveries([delivery]))[0];
}

/** Inserts deliveries in one statement, with their reports' arrival rows, and looks up the ids of those already stored. */
export function* insertDeliveries(deliveries: NewDelivery[]): Work<InsertResult[]> {
  const inserted = yield* selectAll(queries.deliveries.insert(deliveries.length), toRowsParams(deliveries.map(toDeliveryParams)));
  const fresh = new Set(inserted.map((r) => r.dedup_key));
  const missing = [...new Set(deliveries.map((d) => d.dedupKey).filter((k) => !fresh.has(k)))];
  const existing = missing.length > 0 ? yield* selectAll(queries.deliveries.findIdsByKey, { keys: missing }) : [];
  const ids = new Map([...inserted, ...existing].map((r) => [r.dedup_key, r.id]));
  const results = deliveries.map((d): InsertResult => {
    const id = ids.get(d.dedupKey);
    // Inserted by another replica and removed again before we looked: nothing durable to point at.
    if (id === undefined) throw new StorageUnavailableError(`delivery ${d.dedupKey} vanished while being stored`, 'STORE_RACE');
    // The first occurrence of a key inserted now is new; the rest are its duplicates.
    return { id, duplicate: !fresh.delete(d.dedupKey) };
  });
  const arrivals = deliveries.flatMap((d, i) =>
    !results[i].duplicate && hasArrival(d) ? [toReportRow(buildReportSnapshot(d, d.series, null))] : [],
  );
  if (arrivals.length > 0) yield* execute(queries.reports.arrive(arrivals.length), toRowsParams(arrivals));
  return results;
}

/** The widest row (a delivery's, 27 parameters) stays well below SQLite's 32,766 parameters and PostgreSQL's 65,535. */
export const ROWS_PER_STATEMENT = 500;

function* executeRows(
  family: (count: number) => Statement<Record<string, unknown>, unknown>,
  rows: readonly object[],
  shared: object = {},
): Work<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    yield* execute(family(chunk.length), toRowsParams(chunk, shared));
  }
}

/**
 * Writes a batch of attempts, a statement per kind of row. `locksRows` (shared store): rows are locked before the
 * separate plan check, so each whole plan comes from one replica and the check sees the previous holder's commit.
 */
export function* settleBatch(batch: SettledBatch, locksRows: boolean): Work<void> {
  const { now, deliveries } = batch;
  const planning = deliveries.filter((d) => d.plan);
  if (planning.length > 0) {
    const ids = planning.map((d) => d.id);
    if (locksRows) yield* execute(queries.deliveries.lock, { ids });
    const planned = new Set((yield* selectAll(queries.routeMails.planned, { deliveryIds: ids })).map((r) => r.delivery_id));
    const unplanned = planning.filter((d) => !planned.has(d.id));
    const decisions = unplanned.flatMap((d) => d.plan!.map((decision) => toRouteMailParams(d.id, decision)));
    yield* executeRows(queries.routeMails.insert, decisions, { now });
  }
  const outcomes = deliveries.flatMap((d) => d.routes.map((r) => toRouteOutcomeRow(d.id, r)));
  yield* executeRows(queries.routeMails.settle, outcomes, { now });
  yield* executeRows(
    queries.sentMessages.save,
    deliveries.flatMap((d) => d.sent.map((m) => toSentMessageParams(d.id, m))),
  );
  yield* executeRows(
    queries.deliveries.settle,
    deliveries.flatMap((d) => (d.state ? [toSettleStateRow(d.id, d.state)] : [])),
    { now },
  );
  yield* executeRows(queries.reports.save, batch.reports.map(toReportRow));
  for (const series of new Set(batch.reports.map((r) => r.series))) yield* execute(queries.reports.forgetOldFailing, { series });
}

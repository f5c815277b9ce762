import { queries } from './queries';
import { toReportParams } from './report-rows';
import { toRouteMailParams, toRouteOutcomeRow } from './route-mail-rows';
import { toSentMessageParams } from './sent-message-rows';
import { toSettleStateRow } from './delivery-rows';
import { toRowsParams, type Statement } from './statement';
import type { DeliverySettlement, SettledBatch } from './types';

/** One statement of a settle, with what it binds. */
export interface BoundStatement {
  statement: Statement<object, unknown>;
  params: object;
}

/**
 * Rows per statement: the widest row (a report's, 17 parameters) stays well below SQLite's 32,766
 * parameters and PostgreSQL's 65,535. A batch holds one row per delivery, route mail or report.
 */
const ROWS_PER_STATEMENT = 500;

/** A rows statement over `rows`, in as many statements as it takes (none for no rows). */
function bindRows(
  family: (count: number) => Statement<Record<string, unknown>, unknown>,
  rows: readonly object[],
  shared: object = {},
): BoundStatement[] {
  const bound: BoundStatement[] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    bound.push({ statement: family(chunk.length), params: toRowsParams(chunk, shared) });
  }
  return bound;
}

/** The plans of these deliveries (those without one recorded yet: settleBatch checks, under the rows' lock on PostgreSQL). */
export function buildPlanStatements(deliveries: readonly DeliverySettlement[], now: number): BoundStatement[] {
  const rows = deliveries.flatMap((d) => (d.plan ?? []).map((decision) => toRouteMailParams(d.id, decision)));
  return bindRows(queries.routeMails.insert, rows, { now });
}

/**
 * The rest of the batch's settle, one statement for each kind of row whatever the batch's size: the
 * route mails' outcomes, the copies of what was sent, the deliveries' states, then the reports composed
 * (each saved, and its series' old failing sets forgotten). Run by the one store over either engine,
 * in one transaction.
 */
export function buildSettlementStatements(batch: SettledBatch): BoundStatement[] {
  const { now, deliveries } = batch;
  const series = [...new Set(batch.reports.map((r) => r.series))];
  return [
    ...bindRows(
      queries.routeMails.settle,
      deliveries.flatMap((d) => d.routes.map((r) => toRouteOutcomeRow(d.id, r))),
      { now },
    ),
    ...bindRows(
      queries.sentMessages.save,
      deliveries.flatMap((d) => d.sent.map((m) => toSentMessageParams(d.id, m))),
    ),
    ...bindRows(
      queries.deliveries.settle,
      deliveries.map((d) => toSettleStateRow(d.id, d.state)),
      { now },
    ),
    ...bindRows(queries.reports.save, batch.reports.map(toReportParams)),
    ...series.map((s) => ({ statement: queries.reports.forgetOldFailing, params: { series: s } })),
  ];
}

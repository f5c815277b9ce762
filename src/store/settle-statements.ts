import { queries } from './queries';
import { toReportParams } from './report-rows';
import { toRouteMailParams } from './route-mail-rows';
import { toSentMessageParams } from './sent-message-rows';
import type { Statement } from './statement';
import type { DeliverySettlement, NewRouteMail, SettledBatch } from './types';

/** One statement of a settle, with what it binds. */
export interface BoundStatement {
  statement: Statement<object, unknown>;
  params: object;
}

function bind<P extends object>(statement: Statement<P, unknown>, params: P): BoundStatement {
  return { statement: statement, params };
}

/** The plan's rows; written only when the delivery has none yet (settleBatch checks, under the delivery row's lock on PostgreSQL). */
export function buildPlanStatements(deliveryId: number, plan: readonly NewRouteMail[], now: number): BoundStatement[] {
  return plan.map((decision) => bind(queries.routeMails.insert, toRouteMailParams(deliveryId, decision, now)));
}

/**
 * The rest of one delivery's settle, in order: its route mails, the copies of what was sent, its state.
 * Run by the one store over either engine, in one transaction.
 */
export function buildSettlementStatements(d: DeliverySettlement, now: number): BoundStatement[] {
  const statements: BoundStatement[] = [];
  for (const r of d.routes) {
    if (r.state === 'sent')
      statements.push(
        bind(queries.routeMails.markSent, { deliveryId: d.id, route: r.route, now, messageId: r.messageId, response: r.response }),
      );
    else
      statements.push(
        bind(queries.routeMails.markFailed, { deliveryId: d.id, route: r.route, now, state: r.state, error: r.error, code: r.code }),
      );
  }
  for (const message of d.sent) statements.push(bind(queries.sentMessages.save, toSentMessageParams(d.id, message)));
  const change = d.state;
  if (change.state === 'sent') statements.push(bind(queries.deliveries.markSent, { id: d.id, now, messageId: change.messageId }));
  else if (change.state === 'retrying')
    statements.push(
      bind(queries.deliveries.markRetry, { id: d.id, now, nextAttemptAt: change.nextAttemptAt, error: change.error, code: change.code }),
    );
  else statements.push(bind(queries.deliveries.markDead, { id: d.id, now, error: change.error, code: change.code }));
  return statements;
}

/** The batch's report snapshots (the trend's history): each saved, and its series' old failing sets forgotten. */
export function buildReportStatements(batch: SettledBatch): BoundStatement[] {
  return batch.reports.flatMap((snapshot) => [
    bind(queries.reports.save, toReportParams(snapshot)),
    bind(queries.reports.forgetOldFailing, { series: snapshot.series }),
  ]);
}

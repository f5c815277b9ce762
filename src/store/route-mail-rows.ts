import { selectAs, toValuesCells } from './statement';
import type { NewRouteMail, OwnerGroupPlan, RouteMailOutcome, RouteMailRecord } from './types';

/** A `route_mails` row as both engines read it; only `reminder` differs (SQLite 0/1, PostgreSQL boolean). */
export type RouteMailRow = Omit<RouteMailRecord, 'reminder' | 'ownerGroup'> & { reminder: boolean | number; ownerGroup: string | null };

export const ROUTE_MAIL_FIELDS = selectAs(
  'delivery_id, route, position, outcome, reason, reminder, state, message_id, response, last_error, last_error_code, sent_at, decided_at, updated_at, owner_group',
);

/** The columns a decision's INSERT binds, each from the parameter of its field's name. */
export const ROUTE_MAIL_WRITTEN = 'delivery_id, route, position, outcome, reason, reminder, state, owner_group';

/** A decision as its row: a `send` starts `pending`, the other outcomes are final. */
export function toRouteMailParams(deliveryId: number, decision: NewRouteMail) {
  const { outcome, ownerGroup } = decision;
  return {
    ...decision,
    deliveryId,
    state: outcome === 'send' ? 'pending' : outcome,
    ownerGroup: ownerGroup ? JSON.stringify(ownerGroup) : null,
  };
}

/** The cells of a route mail's settle row, typed (they are read as a table, not inserted). */
export const ROUTE_OUTCOME_VALUES = toValuesCells(
  'delivery_id BIGINT, route TEXT, state TEXT, message_id TEXT, response TEXT, error TEXT, code TEXT',
);

/** What a route mail came to, as its settle row: a sent mail has no error, a failed one no Message-ID. */
export function toRouteOutcomeRow(deliveryId: number, outcome: RouteMailOutcome) {
  return { deliveryId, messageId: null, response: null, error: null, code: null, ...outcome };
}

export function decodeRouteMailRow(row: RouteMailRow): RouteMailRecord {
  const ownerGroup = row.ownerGroup ? (JSON.parse(row.ownerGroup) as OwnerGroupPlan) : null;
  return { ...row, reminder: row.reminder === true || row.reminder === 1, ownerGroup };
}

import type { NewRouteMail, OwnerGroupPlan, RouteMailRecord, RouteMailState } from './types';

/** A `route_mails` row as both engines read it; only `reminder` differs (SQLite 0/1, PostgreSQL boolean). */
export interface RouteMailRow {
  delivery_id: number;
  route: string;
  position: number;
  outcome: NewRouteMail['outcome'];
  reason: string;
  reminder: boolean | number;
  state: RouteMailState;
  message_id: string | null;
  response: string | null;
  last_error: string | null;
  last_error_code: string | null;
  sent_at: number | null;
  decided_at: number;
  updated_at: number;
  /** JSON of the owner group (migration 10); NULL for a plain route mail. */
  owner_group?: string | null;
}

/** The parameters of one decision's INSERT: a `send` starts `pending`, the other outcomes are final. */
export interface RouteMailParams {
  deliveryId: number;
  route: string;
  position: number;
  outcome: NewRouteMail['outcome'];
  reason: string;
  reminder: boolean;
  state: RouteMailState;
  now: number;
  ownerGroup: string | null;
}

/** A routing decision as the parameters of its row. */
export function toRouteMailParams(deliveryId: number, decision: NewRouteMail, now: number): RouteMailParams {
  const { route, position, outcome, reason, reminder } = decision;
  const ownerGroup = decision.ownerGroup ? JSON.stringify(decision.ownerGroup) : null;
  return { deliveryId, route, position, outcome, reason, reminder, state: outcome === 'send' ? 'pending' : outcome, now, ownerGroup };
}

/** Turns a row into the record the Store interface returns. */
export function decodeRouteMailRow(row: RouteMailRow): RouteMailRecord {
  return {
    deliveryId: row.delivery_id,
    route: row.route,
    position: row.position,
    outcome: row.outcome,
    reason: row.reason,
    reminder: row.reminder === true || row.reminder === 1,
    state: row.state,
    messageId: row.message_id,
    response: row.response,
    lastError: row.last_error,
    lastErrorCode: row.last_error_code,
    sentAt: row.sent_at,
    decidedAt: row.decided_at,
    updatedAt: row.updated_at,
    ownerGroup: row.owner_group ? (JSON.parse(row.owner_group) as OwnerGroupPlan) : null,
  };
}

/** The LIKE pattern (escape `!`) of a route's owner-group mails, `<route>~<key>`: they count as the route's mails. */
export function buildRouteGroupsPattern(route: string): string {
  return `${route.replace(/[!%_]/g, (c) => `!${c}`)}~%`;
}

import { escapeLike, selectAs, type ValuesCell } from './statement';
import type { NewRouteMail, OwnerGroupPlan, RouteMailOutcome, RouteMailRecord, RouteMailState } from './types';

/** A `route_mails` row as both engines read it; only `reminder` differs (SQLite 0/1, PostgreSQL boolean). */
export type RouteMailRow = Omit<RouteMailRecord, 'reminder' | 'ownerGroup'> & { reminder: boolean | number; ownerGroup: string | null };

export const ROUTE_MAIL_FIELDS = selectAs(
  'delivery_id, route, position, outcome, reason, reminder, state, message_id, response, last_error, last_error_code, sent_at, decided_at, updated_at, owner_group',
);

/** The parameters of one decision's INSERT: a `send` starts `pending`, the other outcomes are final. */
export interface RouteMailParams {
  deliveryId: number;
  route: string;
  position: number;
  outcome: NewRouteMail['outcome'];
  reason: string;
  reminder: boolean;
  state: RouteMailState;
  ownerGroup: string | null;
}

/** The cells of a decision's row, in the INSERT's column order. */
export const ROUTE_MAIL_VALUES = (
  ['deliveryId', 'route', 'position', 'outcome', 'reason', 'reminder', 'state', 'ownerGroup'] satisfies (keyof RouteMailParams)[]
).map((name): ValuesCell => [name]);

export function toRouteMailParams(deliveryId: number, decision: NewRouteMail): RouteMailParams {
  const { route, position, outcome, reason, reminder } = decision;
  const ownerGroup = decision.ownerGroup ? JSON.stringify(decision.ownerGroup) : null;
  return { deliveryId, route, position, outcome, reason, reminder, state: outcome === 'send' ? 'pending' : outcome, ownerGroup };
}

/** What a route mail came to, as the parameters of its row in the settle: a sent mail has no error, a failed one no Message-ID. */
export interface RouteOutcomeRow {
  deliveryId: number;
  route: string;
  state: RouteMailOutcome['state'];
  messageId: string | null;
  response: string | null;
  error: string | null;
  code: string | null;
}

/** The cells of a {@link RouteOutcomeRow}, typed (they are read as a table, not inserted). */
export const ROUTE_OUTCOME_VALUES: readonly ValuesCell[] = [
  ['deliveryId', 'BIGINT'],
  ['route', 'TEXT'],
  ['state', 'TEXT'],
  ['messageId', 'TEXT'],
  ['response', 'TEXT'],
  ['error', 'TEXT'],
  ['code', 'TEXT'],
];

export function toRouteOutcomeRow(deliveryId: number, r: RouteMailOutcome): RouteOutcomeRow {
  const { route, state } = r;
  if (r.state === 'sent') return { deliveryId, route, state, messageId: r.messageId, response: r.response, error: null, code: null };
  return { deliveryId, route, state, messageId: null, response: null, error: r.error, code: r.code };
}

export function decodeRouteMailRow(row: RouteMailRow): RouteMailRecord {
  const ownerGroup = row.ownerGroup ? (JSON.parse(row.ownerGroup) as OwnerGroupPlan) : null;
  return { ...row, reminder: row.reminder === true || row.reminder === 1, ownerGroup };
}

/** The LIKE pattern (escape `!`) of a route's owner-group mails, `<route>~<key>`: they count as the route's mails. */
export function buildRouteGroupsPattern(route: string): string {
  return `${escapeLike(route)}~%`;
}

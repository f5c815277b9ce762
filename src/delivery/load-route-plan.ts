import type { Logger } from '../shared';
import type { ClaimedDelivery, NewRouteMail, RouteMailRecord } from '../store';
import type { DeliveryContext } from './delivery-context';
import type { ComposedMail } from '../compose';

/**
 * The routing decisions of the delivery: taken at its first attempt and recorded, so a retry, a
 * restart or another replica sends exactly the routes decided then and never one twice. A relay
 * notice is not routed: it goes to its own pseudo-route.
 */
export async function loadRoutePlan(
  context: Pick<DeliveryContext, 'store' | 'planRoutes' | 'clock'>,
  delivery: ClaimedDelivery,
  composed: ComposedMail,
  log: Logger,
): Promise<RouteMailRecord[]> {
  const recorded = await context.store.listRouteMails([delivery.id]);
  if (recorded.length > 0) return recorded;
  const decisions: NewRouteMail[] =
    composed.kind === 'notice'
      ? [{ route: composed.route, position: 0, outcome: 'send', reason: composed.reason ?? 'relay notice (not routed)', reminder: false }]
      : await context.planRoutes(delivery, composed);
  const plan = await context.store.recordRouteDecisions(delivery.id, decisions, context.clock.now());
  for (const d of plan) {
    if (d.outcome === 'suppressed') log.info({ route: d.route, reason: d.reason }, `route ${d.route}: mail suppressed`);
    else log.debug({ route: d.route, outcome: d.outcome, reason: d.reason }, `route ${d.route}: ${d.outcome}`);
  }
  return plan;
}

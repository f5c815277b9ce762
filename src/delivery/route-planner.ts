import { buildReportView } from '../mail';
import { buildCountTrend, buildReportFacts, planRoutes, type ReportFacts, type Route, type RouteDecision } from '../routing';
import type { ClaimedDelivery, Store } from '../store';
import { parseDelivery } from '../webhook';
import type { ComposedReport } from './compose-mail';

/** Decides, for a delivery, what each route does with it. */
export type RoutePlanner = (delivery: ClaimedDelivery, composed: ComposedReport) => Promise<RouteDecision[]>;

/**
 * Evaluates the routes for a report against its trend: the composed report's own trend when one is
 * known (NetBox enrichment), otherwise the counts of the previous stored delivery. The last mail of
 * each `repeat_after` route comes from the recorded route mails, so it is shared by every replica.
 */
export function createRoutePlanner(options: { routes: readonly Route[]; store: Store }): RoutePlanner {
  const needsHistory = options.routes.some((r) => r.notify === 'on-change' || hasRegression(r));
  return async (delivery, composed) => {
    const facts = buildReportFacts(composed.view);
    const trend = composed.trend ?? (needsHistory ? buildCountTrend(await loadPreviousFacts(options.store, delivery.id)) : buildCountTrend(null));
    const lastSent = new Map<string, string | null>();
    for (const route of options.routes) {
      if (route.repeat_after !== undefined) lastSent.set(route.name, await options.store.lastRouteMailCompletedAt(route.name, delivery.id));
    }
    return planRoutes(options.routes, facts, trend, (name) => lastSent.get(name) ?? null);
  };
}

/** The previous report's facts, or null when there is none (or its bytes no longer parse). */
async function loadPreviousFacts(store: Store, deliveryId: number): Promise<ReportFacts | null> {
  const previous = await store.findPreviousDelivery(deliveryId);
  if (!previous) return null;
  try {
    const parsed = parseDelivery(previous.body);
    if (parsed.kind !== 'report') return null;
    return buildReportFacts(buildReportView(parsed, { timezone: 'UTC' }));
  } catch {
    return null;
  }
}

function hasRegression(route: Route): boolean {
  const walk = (c: Route['match']): boolean => !!c && (!!c.regression || (c.all ?? []).some(walk) || (c.any ?? []).some(walk));
  return walk(route.match);
}


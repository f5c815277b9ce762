import type { ComposedReport } from '../compose';
import {
  buildCountTrend,
  buildReportFacts,
  buildRoutingTrend,
  planRoutes,
  type Route,
  type RouteDecision,
  type SourceFacts,
} from '../routing';
import type { ClaimedDelivery, Store } from '../store';

/** Decides, for a delivery, what each route does with it. */
export type RoutePlanner = (delivery: ClaimedDelivery, composed: ComposedReport) => Promise<RouteDecision[]>;

/**
 * Evaluates the routes for a report on its facts and on the trend composition derived and recorded
 * (once per report; with NetBox enrichment it knows the failing pairs). The last mail of each
 * `repeat_after` route comes from the recorded route mails, so every replica sees the same.
 */
export function createRoutePlanner(options: {
  routes: readonly Route[];
  store: Pick<Store, 'lastRouteMailCompletedAt'>;
  /** The configured NetBox sources, for `source` and `source_tags` conditions (a source no longer configured has no tags). */
  sources?: readonly SourceFacts[];
}): RoutePlanner {
  const tags = new Map((options.sources ?? []).map((s) => [s.name, s.tags]));
  return async (delivery, composed) => {
    const facts = buildReportFacts(composed.delivery, { name: delivery.netboxSource, tags: tags.get(delivery.netboxSource) ?? {} });
    const trend = composed.trend ? buildRoutingTrend(composed.trend, facts) : buildCountTrend(null);
    const lastSent = new Map<string, string | null>();
    for (const route of options.routes) {
      if (route.repeat_after !== undefined) lastSent.set(route.name, await options.store.lastRouteMailCompletedAt(route.name, delivery.id));
    }
    return planRoutes(options.routes, facts, trend, (name) => lastSent.get(name) ?? null);
  };
}

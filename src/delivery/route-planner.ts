import { buildReportFacts, buildRoutingTrend, planRoutes, type Route, type RouteDecision, type TrendLike } from '../routing';
import type { ClaimedDelivery, Store } from '../store';
import { buildReportSnapshot, buildSeriesKey, recordReportTrend, type ReportHistory } from '../trend';
import type { ComposedReport } from './compose-mail';

/** Decides, for a delivery, what each route does with it. */
export type RoutePlanner = (delivery: ClaimedDelivery, composed: ComposedReport) => Promise<RouteDecision[]>;

/**
 * Evaluates the routes for a report against its trend: the one composition recorded (in the view;
 * with NetBox enrichment it knows the failing pairs), otherwise the report history's trend from the
 * counts alone, recorded here. The last mail of each `repeat_after` route comes from the recorded
 * route mails, so every replica sees the same. `history` (default: the store) is where the trend
 * is read and saved; the relay saves through the outcome ledger, which keeps a refused save.
 */
export function createRoutePlanner(options: { routes: readonly Route[]; store: Store; netboxUrl?: string; history?: ReportHistory }): RoutePlanner {
  return async (delivery, composed) => {
    const facts = buildReportFacts(composed.view);
    const trend: TrendLike =
      composed.view.trend ??
      (await recordReportTrend(options.history ?? options.store, buildReportSnapshot(composed.delivery, buildSeriesKey({ netboxUrl: options.netboxUrl, reportUrl: composed.delivery.report.url }), null)));
    const lastSent = new Map<string, string | null>();
    for (const route of options.routes) {
      if (route.repeat_after !== undefined) lastSent.set(route.name, await options.store.lastRouteMailCompletedAt(route.name, delivery.id));
    }
    return planRoutes(options.routes, facts, buildRoutingTrend(trend, facts), (name) => lastSent.get(name) ?? null);
  };
}

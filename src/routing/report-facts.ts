import type { NetboxDevice } from '../netbox';
import { mapCountLines, passPercent } from '../report';
import type { Trend } from '../trend';
import { DEFAULT_SOURCE_NAME, type ReportDelivery } from '../webhook';
import { ROUTE_SEVERITIES, type RouteSeverity } from './routes-schema';

/** One severity's (or the overall) numbers as routes see them. */
interface RatioFacts {
  failed: number;
  /** As NetBox shows it (one decimal), null when nothing was counted. */
  percent: number | null;
}

/** What routes match on, from one report. */
export interface ReportFacts {
  reportId: number;
  /** ISO completion time: the clock `repeat_after` is measured on. */
  completedAt: string;
  ratios: Record<RouteSeverity, RatioFacts>;
  hasFailures: boolean;
  customFields: Record<string, unknown>;
  /** The NetBox source the report came from (its name and configured tags); absent: the default source. */
  source?: SourceFacts;
  /** The failing devices with NetBox's attributes, for `device` conditions; absent when not known (no NetBox, or it could not say). */
  devices?: readonly NetboxDevice[];
  /** While a route's scope is worked out: the one device a `device` condition looks at. */
  focus?: NetboxDevice;
}

/** A NetBox source as routes see it. */
export interface SourceFacts {
  name: string;
  tags: Readonly<Record<string, string>>;
}

/** The source of a relay with one NetBox (no SOURCES_FILE), and of every report stored before sources existed. */
export const DEFAULT_SOURCE_FACTS: SourceFacts = { name: DEFAULT_SOURCE_NAME, tags: {} };

/**
 * What routes need from the report history. Failing (device, test) pairs are known only when the
 * results were fetched from NetBox; without them `newlyFailing` and `failingSetChanged` are null and
 * the policies fall back on the failed counts per severity.
 */
export interface RoutingTrend {
  /** The report before this one (by creation time), or null for the first one. */
  previous: ReportFacts | null;
  /** How many pairs fail now that did not before; null when pairs are unknown. */
  newlyFailing: number | null;
  /** Whether the set of failing pairs differs from the previous report's; null when unknown. */
  failingSetChanged: boolean | null;
  /** Failing results of this report that are accepted exceptions (waived pairs): no reason to mail on their own. Absent: none. */
  waived?: number;
}

/** The facts of a report, from its numbers (the same ones the mail shows: validity's rounding). */
export function buildReportFacts(delivery: ReportDelivery, source: SourceFacts = DEFAULT_SOURCE_FACTS): ReportFacts {
  const r = delivery.report;
  const c = delivery.counts;
  return {
    reportId: r.id,
    completedAt: delivery.completedAt,
    ratios: mapCountLines((line) => ({ failed: c[line].count - c[line].passed, percent: passPercent(c[line].passed, c[line].count) })),
    hasFailures: c.overall.passed < c.overall.count,
    customFields: r.custom_fields ?? {},
    source,
  };
}

/** A trend from counts alone (no failing pairs): what the relay knows without NetBox enrichment. */
export function buildCountTrend(previous: ReportFacts | null): RoutingTrend {
  return { previous, newlyFailing: null, failingSetChanged: null, waived: 0 };
}

/** The routing view of the report history's trend: previous figures from the deltas, failing-pair answers when both sets are known. */
export function buildRoutingTrend(trend: Trend, current: ReportFacts): RoutingTrend {
  const waived = trend.leftOut.HIGH + trend.leftOut.MIDDLE + trend.leftOut.LOW;
  if (!trend.previous) return { ...buildCountTrend(null), waived };
  const before = (name: RouteSeverity): [RouteSeverity, RatioFacts] => {
    const delta = name === 'overall' ? trend.overall : trend.severities.find((d) => d.name === name);
    return [name, delta ? { failed: delta.previousFailed, percent: delta.previousPercent } : current.ratios[name]];
  };
  const previous: ReportFacts = {
    reportId: trend.previous.reportId,
    completedAt: trend.previous.created,
    ratios: Object.fromEntries(ROUTE_SEVERITIES.map(before)) as ReportFacts['ratios'],
    hasFailures: (trend.overall?.previousFailed ?? 0) > 0,
    customFields: {},
    source: current.source,
  };
  return {
    previous,
    newlyFailing: trend.failingSetKnown ? trend.newlyFailingCount : null,
    failingSetChanged: trend.failingSetKnown ? trend.failingSetChanged : null,
    waived,
  };
}

/** Something failed that is not an accepted exception: what on-change's first report and reminders ask. */
export function hasUnwaivedFailures(facts: ReportFacts, trend: RoutingTrend): boolean {
  return facts.hasFailures && facts.ratios.overall.failed > (trend.waived ?? 0);
}

import type { ReportView } from '../mail';
import type { RouteSeverity } from './routes-schema';

/** One severity's (or the overall) numbers as routes see them. */
export interface RatioFacts {
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
}

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
}

/** The facts of a report, from the view the templates get (so a mail and its route agree). */
export function buildReportFacts(view: Pick<ReportView, 'report' | 'completedAt' | 'overall' | 'severities' | 'hasFailures'>): ReportFacts {
  const ratio = (r: { failed: number; percent: number | null }): RatioFacts => ({ failed: r.failed, percent: r.percent });
  const bySeverity = Object.fromEntries(view.severities.map((s) => [s.name, ratio(s)])) as Record<string, RatioFacts>;
  const none: RatioFacts = { failed: 0, percent: null };
  return {
    reportId: view.report.id,
    completedAt: view.completedAt,
    ratios: { HIGH: bySeverity.HIGH ?? none, MIDDLE: bySeverity.MIDDLE ?? none, LOW: bySeverity.LOW ?? none, overall: ratio(view.overall) },
    hasFailures: view.hasFailures,
    customFields: view.report.customFields,
  };
}

/** A trend from counts alone (no failing pairs): what the relay knows without NetBox enrichment. */
export function buildCountTrend(previous: ReportFacts | null): RoutingTrend {
  return { previous, newlyFailing: null, failingSetChanged: null };
}

/**
 * What routes read of the report history's trend: the trend itself (`Trend`) or its template view
 * (`TrendView`), which carry the same fields.
 */
export interface TrendLike {
  previous: { reportId: number; created: string } | null;
  overall: { previousFailed: number; previousPercent: number | null } | null;
  severities: readonly { name: string; previousFailed: number; previousPercent: number | null }[];
  failingSetKnown: boolean;
  failingSetChanged: boolean | null;
  /** Exact count (Trend) ... */
  newlyFailingCount?: number;
  /** ... or the capped list plus the rest (TrendView). */
  newlyFailing: readonly unknown[];
  moreNewlyFailing?: number;
}

/**
 * The routing view of the report history's trend: the previous report's figures from the deltas,
 * and the failing-pair answers only when both failing sets are known (otherwise the policies compare
 * failed counts, which the deltas carry).
 */
export function buildRoutingTrend(trend: TrendLike, current: ReportFacts): RoutingTrend {
  if (!trend.previous) return buildCountTrend(null);
  const before = (name: string, fallback: RatioFacts): RatioFacts => {
    const delta = name === 'overall' ? trend.overall : trend.severities.find((d) => d.name === name);
    return delta ? { failed: delta.previousFailed, percent: delta.previousPercent } : fallback;
  };
  const previous: ReportFacts = {
    reportId: trend.previous.reportId,
    completedAt: trend.previous.created,
    ratios: {
      HIGH: before('HIGH', current.ratios.HIGH),
      MIDDLE: before('MIDDLE', current.ratios.MIDDLE),
      LOW: before('LOW', current.ratios.LOW),
      overall: before('overall', current.ratios.overall),
    },
    hasFailures: (trend.overall?.previousFailed ?? 0) > 0,
    customFields: {},
  };
  const newly = trend.newlyFailingCount ?? trend.newlyFailing.length + (trend.moreNewlyFailing ?? 0);
  return {
    previous,
    newlyFailing: trend.failingSetKnown ? newly : null,
    failingSetChanged: trend.failingSetKnown ? trend.failingSetChanged : null,
  };
}

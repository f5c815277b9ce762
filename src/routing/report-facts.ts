import type { NetboxDevice } from '../netbox';
import { passPercent, SEVERITIES, type PassCount, type ReportCounts } from '../report';
import type { Trend } from '../trend';
import { DEFAULT_SOURCE_NAME, type ReportDelivery } from '../webhook';
import type { RouteSeverity } from './routes-schema';

/** What routes match on, from one report (its trend, when known, is read beside it). */
export interface ReportFacts {
  reportId: number;
  /** ISO completion time: the clock `repeat_after` is measured on. */
  completedAt: string;
  /** validity's counts, as the mail shows them. */
  counts: ReportCounts;
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

export function buildReportFacts(delivery: ReportDelivery, source: SourceFacts = DEFAULT_SOURCE_FACTS): ReportFacts {
  const r = delivery.report;
  return { reportId: r.id, completedAt: delivery.completedAt, counts: delivery.counts, customFields: r.custom_fields ?? {}, source };
}

const failedOf = (line: PassCount) => line.count - line.passed;

/** A severity's (or the overall) failed results and pass percentage as NetBox shows it (null when nothing was counted). */
export function readRatio(facts: ReportFacts, severity: RouteSeverity): { failed: number; percent: number | null } {
  const line = facts.counts[severity];
  return { failed: failedOf(line), percent: passPercent(line.passed, line.count) };
}

/** The same in the previous report, from the trend's deltas (validity's figures); null without a previous report. */
export function readPreviousRatio(trend: Trend | null, severity: RouteSeverity): { failed: number; percent: number | null } | null {
  const delta = severity === 'overall' ? trend?.overall : trend?.severities.find((d) => d.name === severity);
  return delta ? { failed: delta.previousFailed, percent: delta.previousPercent } : null;
}

/**
 * Pairs failing now that did not before; without the failing pairs (no NetBox enrichment), the best evidence is a
 * failed count that grew: how many more results failed. Null without a previous report.
 */
export function countNewlyFailing(facts: ReportFacts, trend: Trend | null, severity: RouteSeverity): number | null {
  if (!trend?.previous) return null;
  if (trend.failingSetKnown) return trend.newlyFailingCount;
  const severities = severity === 'overall' ? SEVERITIES : [severity];
  const grown = (s: RouteSeverity) => Math.max(0, readRatio(facts, s).failed - (readPreviousRatio(trend, s)?.failed ?? 0));
  return severities.map(grown).reduce((sum, n) => sum + n, 0);
}

export const hasFailures = (facts: ReportFacts): boolean => failedOf(facts.counts.overall) > 0;

/** Something failed that is not an accepted exception: what on-change's first report and reminders ask. */
export function hasUnwaivedFailures(facts: ReportFacts, trend: Trend | null): boolean {
  const waived = trend ? trend.leftOut.HIGH + trend.leftOut.MIDDLE + trend.leftOut.LOW : 0;
  return failedOf(facts.counts.overall) > waived;
}

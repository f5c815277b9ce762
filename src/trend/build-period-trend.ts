import { mapCountLines, passPercent } from '../report';
import { buildTrend, pairKey } from './build-trend';
import { compareReportOrder, type FailingPair, type PairStates, type ReportSnapshot } from './types';
import { compareNames } from '../shared';

/** One report of the period, as a point of its chart. */
export type PeriodPoint = ReturnType<typeof buildPeriodPoint>;

/** What one series (one NetBox, one base path) did over a digest's period. */
export type SeriesPeriodTrend = ReturnType<typeof buildPeriodTrend>;

const WORST_DEVICES_SHOWN = 5;

/** The period trend of one series from its reports in the period (any order) and its last report before it, if any. Pure. */
export function buildPeriodTrend(
  reports: readonly ReportSnapshot[],
  before: ReportSnapshot | undefined,
  /** The pairs (by pairKey) that are accepted exceptions at the period's end: left out of the change, counted apart. */
  waived: ReadonlySet<string> = new Set(),
) {
  if (reports.length === 0) throw new Error('a period trend needs at least one report');
  const sorted = [...reports].sort(compareReportOrder);
  const last = sorted[sorted.length - 1];
  const reference = before ?? (sorted.length > 1 ? sorted[0] : undefined);
  const points = sorted.map(buildPeriodPoint);
  return {
    series: last.series,
    /** The period's reports, oldest first (by creation, then id): the chart's points. */
    points,
    latest: points[points.length - 1],
    /** The series' last report before the period, or else the period's first (`inPeriod`); null for a period of one first report. */
    baseline: reference ? { reportId: reference.reportId, created: reference.created, inPeriod: before === undefined } : null,
    /** The latest report against the baseline: the change over the period (a pair failed and fixed within it is in neither list). */
    change: buildTrend(last, reference ? [reference] : [], {
      leftOut: { current: waived, previous: waived },
      states: reference ? derivePeriodStates([reference, ...sorted.filter((r) => r !== reference)]) : undefined,
    }),
    /** Devices by failing results in the latest report, HIGH first, accepted exceptions left out; empty when its failing pairs are unknown. */
    worstDevices: last.failing ? rankDevices(last.failing.filter((pair) => !waived.has(pairKey(pair)))) : [],
    /** Failing pairs of the latest report that are accepted exceptions (counted apart; the ratios stay validity's). */
    waived: last.failing ? last.failing.filter((pair) => waived.has(pairKey(pair))).length : 0,
  };
}

/** A report as a chart point: overall and per severity, its pass percentages as NetBox shows them (null: none counted), its failed results. */
export function buildPeriodPoint(report: ReportSnapshot) {
  const c = report.counts;
  return {
    reportId: report.reportId,
    created: report.created,
    createdMs: report.createdMs,
    dedupKey: report.dedupKey,
    ratios: mapCountLines((line) => passPercent(c[line].passed, c[line].count)),
    failed: mapCountLines((line) => c[line].count - c[line].passed),
  };
}

/**
 * The states of pairs whose failing changed from `chain[0]` to the last, from the stored comparisons: each as the report
 * right after its last failure (or before its last run began) recorded it. Unrecorded: unknown; stored without states: evaluated.
 */
function derivePeriodStates(chain: readonly ReportSnapshot[]): PairStates | undefined {
  if (chain.some((r) => r.failing === null)) return undefined;
  const sets = chain.map((r) => new Set(r.failing!.map(pairKey)));
  const [first, last] = [sets[0], sets[sets.length - 1]];
  const statesOf = (side: 'now' | 'before', keys: ReadonlySet<string>, other: ReadonlySet<string>) => {
    const states = new Map<string, boolean>();
    for (const key of keys) {
      if (other.has(key)) continue;
      const report = chain[findLast(sets, (set) => set.has(key) === first.has(key)) + 1];
      const state = report.states === undefined ? true : (report.states?.[side]?.get(key) ?? undefined);
      if (state !== undefined) states.set(key, state);
    }
    return states;
  };
  const [now, before] = [statesOf('now', first, last), statesOf('before', last, first)];
  return { now, before, deletedTests: [], deletedDevices: [], unknownReason: 'the reports of the period did not record it' };
}

function findLast<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (test(items[i])) return i;
  return -1;
}

/** The devices with failing results, worst first: `high` (of which HIGH) is the first key of "worst". */
function rankDevices(failing: readonly FailingPair[]) {
  const byDevice = new Map<string, { device: string; failing: number; high: number }>();
  for (const pair of failing) {
    const entry = byDevice.get(pair.device) ?? { device: pair.device, failing: 0, high: 0 };
    entry.failing += 1;
    if (pair.severity === 'HIGH') entry.high += 1;
    byDevice.set(pair.device, entry);
  }
  return [...byDevice.values()]
    .sort((a, b) => b.high - a.high || b.failing - a.failing || compareNames(a.device, b.device))
    .slice(0, WORST_DEVICES_SHOWN);
}

import { countPerSeverity, SEVERITIES, type ReportCounts, type Severity, type SeverityCounts } from '../report';
import { buildFirstTrend, comparePairs, pairKey, placeInSeries, type TrendOptions, type Trend } from './build-trend';
import { addOverall, buildFailingDeltas } from './build-deltas';
import { decideVerdict } from './decide-verdict';
import type { FailingPair, ReportSnapshot } from './types';

/**
 * An owner group's trend: both failing sets filtered to `devices`, compared as buildTrend does. The history's counts span
 * all devices, so the verdict goes by these devices' failing results (never "scope changed") and deltas carry failing
 * counts; `counts` gives today's percentages. Accepted exceptions count as passed on both sides (`leftOut` none). Null when
 * either failing set is unknown. Pure.
 */
export function buildDevicesTrend(
  current: ReportSnapshot,
  history: readonly ReportSnapshot[],
  options: TrendOptions & { devices: ReadonlySet<string>; counts?: SeverityCounts | null },
): Trend | null {
  const keep = (pairs: readonly FailingPair[]) => pairs.filter((pair) => options.devices.has(pair.device));
  if (current.failing === null) return null;
  const leftOut = countPerSeverity([]);
  const previousRaw = history[0];
  if (!previousRaw) return { ...buildFirstTrend(options, true), leftOut };
  if (previousRaw.failing === null) return null;
  const mine = { ...current, failing: keep(current.failing) };
  const pairs = comparePairs(mine, { ...previousRaw, failing: keep(previousRaw.failing) }, history, options);
  // The decision and the deltas count the kept pairs (accepted exceptions left out), as the group's ratios do.
  const nowKept = countPerSeverity(pairs.currentKept.failing!);
  // A previous failure not evaluated now is no change of these devices' failing results.
  const notComparable = new Set(pairs.notComparable.map(pairKey));
  const thenKept = countPerSeverity(pairs.previous.failing!.filter((pair) => !notComparable.has(pairKey(pair))));
  const [overall, ...severities] = buildFailingDeltas(
    nowKept,
    countPerSeverity(pairs.previous.failing!),
    options.counts ? addOverall(options.counts) : null,
  );
  const changed = pairs.newlyFailing.length > 0 || pairs.fixed.length > 0 || SEVERITIES.some((s) => nowKept[s] !== thenKept[s]);
  return {
    ...decideVerdict({
      current: overSameCount(nowKept, thenKept),
      previous: overSameCount(thenKept, nowKept),
      newlyFailing: pairs.newlyFailing,
      fixed: pairs.fixed,
      failingSetKnown: true,
    }),
    devicesOnly: true,
    ...placeInSeries(previousRaw, options),
    overall,
    severities,
    failingSetKnown: true,
    failingSetChanged: changed,
    regression: pairs.newlyFailing.length > 0 || SEVERITIES.some((s) => nowKept[s] > thenKept[s]),
    ...pairs.lists,
    leftOut,
  };
}

/** Both sides over the larger failing count per severity: a ratio falls exactly when the failing count grows. */
function overSameCount(failing: Record<Severity, number>, other: Record<Severity, number>): ReportCounts {
  const [HIGH, MIDDLE, LOW] = SEVERITIES.map((s) => {
    const count = Math.max(failing[s], other[s]);
    return { passed: count - failing[s], count };
  });
  return addOverall({ HIGH, MIDDLE, LOW });
}

import { countPerSeverity, SEVERITY_ORDER, type Severity } from '../report';
import type { FailingPair, PairStates, ReportSnapshot } from './types';
import { decideVerdict, type Verdict } from './decide-verdict';
import { addPassed, buildDeltas, type TrendDelta } from './build-deltas';
import { buildStreaks, byPairOrder, failingKeys, pairKey, type FailingStreak } from './build-streaks';
import { compareNames } from '../shared';

export { failingKeys, pairKey } from './build-streaks';

/** The pairs of one test, as a mail lists them: one line per test, not one per result. */
export type TestPairsGroup = ReturnType<typeof groupPairsByTest>[number];

/** How a report compares with the previous one of its series (by creation time); its pair lists are whole (the mail's view caps them). */
export interface Trend extends ReturnType<typeof listPairs> {
  /** See decideVerdict. */
  verdict: Verdict;
  scopeChanged: boolean;
  /** Some of the report's devices only (an owner group's share): see buildDevicesTrend. */
  devicesOnly: boolean;
  /** The report compared with (null: first of its series); `pending`: its mail not composed yet, so compared on counts only. */
  previous: { reportId: number; created: string; dedupKey: string; pending?: boolean } | null;
  arrivedLate?: boolean;
  overall: TrendDelta | null;
  /** HIGH, MIDDLE, LOW; empty when there is no previous report. */
  severities: TrendDelta[];
  failingSetKnown: boolean;
  /** True when the failing pairs (or failed counts) differ; false when both sets are known and equal; null when it cannot be told. */
  failingSetChanged: boolean | null;
  /** True when any pass percentage fell or a pair newly fails. */
  regression: boolean;
  /** Accepted exceptions per severity: validity's figures in the deltas, passed for the verdict and flags; none if devicesOnly. */
  leftOut: Record<Severity, number>;
}

/** Pairs (by {@link pairKey}) left out of the comparison: waived now, and those that count as passed in the previous report. */
export type LeftOutPairs = { current: ReadonlySet<string>; previous: ReadonlySet<string> };

/** A failing pair's place in the series: newly failing, failing `reports` in a row, no result before (`unseen`), or `unknown`. */
export type PairBadge =
  { kind: 'new' } | { kind: 'unseen' } | { kind: 'unknown' } | { kind: 'streak'; reports: number; sinceReportId: number; atLeast: boolean };

export interface TrendOptions {
  historyTruncated?: boolean;
  leftOut?: LeftOutPairs;
  /** What NetBox's results say of the pairs that changed; absent: every pair was evaluated in both reports (a sample). */
  states?: PairStates;
  previousPending?: boolean;
  arrivedLate?: boolean;
}

/** Compares a report with `history[0]`; older ones (newest first) only measure streaks (`historyTruncated`: more exist). Pure. */
export function buildTrend(current: ReportSnapshot, history: readonly ReportSnapshot[], options: TrendOptions = {}): Trend {
  const currentLeftOut = countBySeverity(current.failing, options.leftOut?.current);
  const previousRaw = history[0];
  if (!previousRaw) return { ...buildFirstTrend(options), leftOut: currentLeftOut };
  // What the decisions compare: left-out pairs count as passed on their side.
  const cd = addPassed(current.counts, currentLeftOut);
  const pd = addPassed(previousRaw.counts, countBySeverity(previousRaw.failing, options.leftOut?.previous));
  const decided = buildDeltas(cd, pd);
  const [overall, ...severities] = buildDeltas(current.counts, previousRaw.counts);
  const failingSetKnown = current.failing !== null && previousRaw.failing !== null;
  const pairs = comparePairs(current, previousRaw, history, options);
  const changed = decided.some((d) => d.deltaFailed !== 0) || pairs.newlyFailing.length > 0 || pairs.fixed.length > 0;
  return {
    ...decideVerdict({
      current: cd,
      previous: pd,
      notComparable: countPerSeverity(pairs.notComparable),
      newlyFailing: pairs.newlyFailing,
      fixed: pairs.fixed,
      failingSetKnown,
    }),
    devicesOnly: false,
    ...placeInSeries(previousRaw, options),
    overall,
    severities,
    failingSetKnown,
    failingSetChanged: changed ? true : failingSetKnown ? false : null,
    regression: decided.some((d) => d.direction === 'worse') || pairs.newlyFailing.length > 0,
    ...pairs.lists,
    leftOut: currentLeftOut,
  };
}

/**
 * Compares both failing sets without left-out pairs: fixed only when `states` shows it passed now, newly failing only when
 * it passed before (no `states`: all evaluated in both). Empty lists when either set is unknown.
 */
export function comparePairs(
  current: ReportSnapshot,
  previousRaw: ReportSnapshot,
  history: readonly ReportSnapshot[],
  options: TrendOptions,
) {
  const currentKept = withoutPairs(current, options.leftOut?.current);
  const previous = withoutPairs(previousRaw, options.leftOut?.previous);
  const known = currentKept.failing !== null && previous.failing !== null;
  const [now, then] = known ? [currentKept.failing!, previous.failing!] : [[], []];
  const before = failingKeys(then);
  const after = failingKeys(now);
  const currentKeys = now.map(pairKey);
  const appeared = now.filter((_, i) => !before.has(currentKeys[i]));
  const gone = then.filter((pair) => !after.has(pairKey(pair)));
  const still = now.filter((_, i) => before.has(currentKeys[i]));
  const went = splitByState(gone, options.states?.now);
  const came = splitByState(appeared, options.states?.before);
  const newlyFailing = [...came.passed].sort(byPairOrder);
  const fixed = [...went.passed].sort(byPairOrder);
  const stillFailing = buildStreaks(current, still, history, options.historyTruncated ?? false);
  return {
    currentKept,
    previous,
    newlyFailing,
    fixed,
    // Previous failures not evaluated now, or not known to have been: they leave the previous side of the ratios.
    notComparable: [...went.absent, ...went.unknown],
    lists: listPairs(newlyFailing, fixed, stillFailing, went, came),
  };
}

/** A trend's pair lists, and every failing pair's badge. */
function listPairs(newlyFailing: FailingPair[], fixed: FailingPair[], stillFailing: FailingStreak[], went: SplitPairs, came: SplitPairs) {
  const badges = new Map<string, PairBadge>(newlyFailing.map((pair) => [pairKey(pair), { kind: 'new' }]));
  for (const pair of came.absent) badges.set(pairKey(pair), { kind: 'unseen' });
  for (const pair of came.unknown) badges.set(pairKey(pair), { kind: 'unknown' });
  for (const s of stillFailing)
    badges.set(pairKey(s), { kind: 'streak', reports: s.reports, sinceReportId: s.sinceReportId, atLeast: s.atLeast });
  return {
    /** Pairs failing now that passed in the previous report (without {@link PairStates}: that did not fail there). */
    newlyFailing,
    /** Pairs that failed in the previous report and NetBox shows passed in this one. */
    fixed,
    /** Every device with a fixed pair, once, by name: an owner group's mail counts the fixes of its devices. */
    fixedDevices: listFixedDevices(fixed),
    /** Pairs failing now and in the previous report, longest streak first. */
    stillFailing,
    /** The three lists above grouped per test. */
    newlyFailingTests: groupPairsByTest(newlyFailing),
    stillFailingTests: groupPairsByTest(stillFailing),
    fixedTests: groupPairsByTest(fixed),
    /** Pairs that failed in the previous report and have no result in this one (not evaluated): out of the verdict; by device. */
    notEvaluated: sortByDevice(went.absent),
    /** Pairs that failed before and not now, of which NetBox could not say whether they passed or were not evaluated. */
    undeterminedCount: went.unknown.length,
    /** Pairs failing now that have no result in the previous report (new since, or not evaluated there). */
    notEvaluatedBefore: sortByDevice(came.absent),
    /** Pairs failing now and not before, of which NetBox could not say whether they passed there. */
    undeterminedBeforeCount: came.unknown.length,
    /** Each failing pair's badge by {@link pairKey}: the mail lists each (device, test) once, tagged with what changed. */
    badges: badges as ReadonlyMap<string, PairBadge>,
  };
}

/** Groups pairs per test (HIGH first, most devices, name), devices by name, with the longest streak and where it began. */
function groupPairsByTest(pairs: readonly (FailingPair & { reports?: number; sinceReportId?: number })[]) {
  const byTest = new Map<string, { severity: Severity; devices: string[]; longestReports: number; longestSinceReportId: number | null }>();
  for (const pair of pairs) {
    const group = byTest.get(pair.test) ?? { severity: pair.severity, devices: [], longestReports: 0, longestSinceReportId: null };
    group.devices.push(pair.device);
    // A test's severity is one value in validity; the highest seen wins should two reports disagree.
    if (SEVERITY_ORDER[pair.severity] < SEVERITY_ORDER[group.severity]) group.severity = pair.severity;
    if ((pair.reports ?? 0) > group.longestReports) {
      group.longestReports = pair.reports ?? 0;
      group.longestSinceReportId = pair.sinceReportId ?? null;
    }
    byTest.set(pair.test, group);
  }
  return [...byTest.entries()]
    .map(([test, g]) => ({ test, ...g, devices: g.devices.sort((a, b) => compareNames(a, b)) }))
    .sort(
      (a, b) =>
        SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.devices.length - a.devices.length || compareNames(a.test, b.test),
    );
}

/** The devices of some pairs, each once, by name, with NetBox's id when the history kept it. */
function listFixedDevices(pairs: readonly FailingPair[]) {
  const byName = new Map<string, { name: string; id: number | null }>();
  for (const pair of pairs) {
    const known = byName.get(pair.device);
    if (!known || known.id === null) byName.set(pair.device, { name: pair.device, id: pair.ids?.device ?? null });
  }
  return [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
}

type SplitPairs = Record<'passed' | 'absent' | 'unknown', FailingPair[]>;

/** Without a states map every pair passed, a null map knows none. */
function splitByState(pairs: readonly FailingPair[], states: ReadonlyMap<string, boolean> | null | undefined): SplitPairs {
  if (states === undefined) return { passed: [...pairs], absent: [], unknown: [] };
  const split: SplitPairs = { passed: [], absent: [], unknown: [] };
  for (const pair of pairs) {
    const state = states?.get(pairKey(pair));
    (state === true ? split.passed : state === false ? split.absent : split.unknown).push(pair);
  }
  return split;
}

function countBySeverity(failing: readonly FailingPair[] | null, keys?: ReadonlySet<string>): Record<Severity, number> {
  return countPerSeverity(failing && keys?.size ? failing.filter((pair) => keys.has(pairKey(pair))) : []);
}

/** A snapshot without some of its failing pairs (the same object when there are none to drop). */
function withoutPairs(snapshot: ReportSnapshot, keys?: ReadonlySet<string>): ReportSnapshot {
  if (!snapshot.failing || !keys?.size) return snapshot;
  return { ...snapshot, failing: snapshot.failing.filter((pair) => !keys.has(pairKey(pair))) };
}

export function placeInSeries(previous: ReportSnapshot | null, options: TrendOptions): Pick<Trend, 'previous' | 'arrivedLate'> {
  const pending = options.previousPending ? { pending: true } : {};
  return {
    previous: previous && { reportId: previous.reportId, created: previous.created, dedupKey: previous.dedupKey, ...pending },
    ...(options.arrivedLate ? { arrivedLate: true } : {}),
  };
}

export function buildFirstTrend(options: TrendOptions, devicesOnly = false): Omit<Trend, 'leftOut'> {
  const none = { passed: [], absent: [], unknown: [] };
  return {
    verdict: 'first',
    scopeChanged: false,
    devicesOnly,
    ...placeInSeries(null, options),
    overall: null,
    severities: [],
    failingSetKnown: false,
    failingSetChanged: null,
    regression: false,
    ...listPairs([], [], [], none, none),
  };
}

function sortByDevice(pairs: FailingPair[]) {
  return [...pairs].sort((a, b) => compareNames(a.device, b.device) || compareNames(a.test, b.test));
}

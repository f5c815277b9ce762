import { SEVERITY_ORDER } from '../report';
import type { FailingPair, ReportSnapshot } from './types';
import { compareNames } from '../shared';

/** A pair that has failed in several reports in a row. */
export interface FailingStreak extends FailingPair {
  /** Reports in a row this pair has failed, this one included (a lower bound when `atLeast`). */
  reports: number;
  /** The oldest report of the streak the relay knows. */
  sinceReportId: number;
  sinceCreated: string;
  /** True when the walk back stopped (history cap or a report whose failing set is unknown) while the pair still failed. */
  atLeast: boolean;
}

export function pairKey(pair: Pick<FailingPair, 'device' | 'test'>): string {
  return `${pair.test}\u0000${pair.device}`;
}

/** The keys of a report's failing pairs as a set, made once per set: the walk back and the streaks ask for the same sets again. */
const keySets = new WeakMap<readonly FailingPair[], ReadonlySet<string>>();
export function failingKeys(failing: readonly FailingPair[]): ReadonlySet<string> {
  let keys = keySets.get(failing);
  if (!keys) keySets.set(failing, (keys = new Set(failing.map(pairKey))));
  return keys;
}

/** Walks back while each pair keeps failing, in typed arrays: thousands of pairs, 30 reports deep, are too slow as objects. */
export function buildStreaks(current: ReportSnapshot, still: FailingPair[], history: readonly ReportSnapshot[], historyTruncated: boolean) {
  if (still.length === 0) return [];
  const keys = still.map(pairKey);
  /** Reports in a row each pair has failed; the oldest of them as an index into `history` (-1: the current report). */
  const reports = new Uint32Array(still.length).fill(1);
  const since = new Int32Array(still.length).fill(-1);
  const open = new Uint8Array(still.length).fill(1);
  const atLeast = new Uint8Array(still.length);
  const markOpenAtLeast = () => open.forEach((o, j) => (atLeast[j] = o ? 1 : atLeast[j]));
  for (let i = 0; i < history.length; i += 1) {
    const report = history[i];
    if (report.failing === null) {
      // Unknown beyond here: what is still open is "at least" that long.
      markOpenAtLeast();
      break;
    }
    const failing = failingKeys(report.failing);
    let anyOpen = false;
    for (let j = 0; j < keys.length; j += 1) {
      if (!open[j]) continue;
      if (failing.has(keys[j])) {
        reports[j] += 1;
        since[j] = i;
        anyOpen = true;
      } else {
        open[j] = 0;
      }
    }
    if (!anyOpen) break;
    if (i === history.length - 1 && historyTruncated) markOpenAtLeast();
  }
  const streaks = still.map((pair, j) => {
    const oldest = since[j] < 0 ? current : history[since[j]];
    // Written out, not spread: thousands of objects.
    const streak: FailingStreak = {
      device: pair.device,
      test: pair.test,
      severity: pair.severity,
      reports: reports[j],
      sinceReportId: oldest.reportId,
      sinceCreated: oldest.created,
      atLeast: atLeast[j] === 1,
    };
    if (pair.ids) streak.ids = pair.ids;
    return streak;
  });
  return streaks.sort((a, b) => b.reports - a.reports || byPairOrder(a, b));
}

/** HIGH first, then by test, then by device. */
export function byPairOrder(a: FailingPair, b: FailingPair): number {
  return SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || compareNames(a.test, b.test) || compareNames(a.device, b.device);
}

import { COUNT_LINES, type ReportCounts, type Severity } from '../report';
import { withoutFailed } from './build-deltas';
import type { FailingPair } from './types';

/** A report against the previous one, in one word: every reader takes it and none decides again (no green "better" over red HIGH). */
export type Verdict = 'first' | 'better' | 'worse' | 'mixed' | 'same';

/** What one severity did. */
type Signal = 'worse' | 'better' | 'mixed' | 'same';

/** The facts the verdict is decided on. `newlyFailing`/`fixed` are empty when the failing sets are unknown. */
export interface VerdictFacts {
  current: ReportCounts;
  previous: ReportCounts | null;
  /** Previous failures not evaluated now (or unknown): out of the previous ratios (gone is no improvement), not the scope. */
  notComparable?: Record<Severity, number>;
  newlyFailing: readonly Pick<FailingPair, 'severity'>[];
  fixed: readonly Pick<FailingPair, 'severity'>[];
  /** Both failing sets are known, so `newlyFailing`/`fixed` are exact; when not, each severity's failing count stands in. */
  failingSetKnown: boolean;
}

/**
 * Per severity (one with results before and none now says nothing): ratio fell or a result newly fails (without the sets: its
 * failing count rose) → worse; ratio rose or a fix (count fell) → better; both → mixed. Then HIGH dominates: worse → "worse"
 * ("mixed" if MIDDLE/LOW improved); better → "better" ("mixed" if MIDDLE/LOW got worse); unchanged → MIDDLE and LOW decide.
 */
export function decideVerdict(facts: VerdictFacts): { verdict: Verdict; scopeChanged: boolean } {
  const { current, previous: counted } = facts;
  if (counted === null) return { verdict: 'first', scopeChanged: false };
  const previous = facts.notComparable ? withoutFailed(counted, facts.notComparable) : counted;
  const signal = (severity: Severity) => decideSignal(severity, facts, previous);
  const rest = [signal('MIDDLE'), signal('LOW')];
  const restSignal = toSignal(
    rest.some((s) => s === 'worse' || s === 'mixed'),
    rest.some((s) => s === 'better' || s === 'mixed'),
  );
  // The scope changed when a result count differs (results are tests × devices; the history keeps only counts).
  const scopeChanged = COUNT_LINES.some((line) => current[line].count !== counted[line].count);
  return { verdict: applyHighFirst(signal('HIGH'), restSignal), scopeChanged };
}

function applyHighFirst(high: Signal, rest: Signal): Exclude<Verdict, 'first'> {
  if (high === 'worse') return rest === 'better' ? 'mixed' : 'worse';
  if (high === 'mixed') return 'mixed';
  if (high === 'better') return rest === 'worse' || rest === 'mixed' ? 'mixed' : 'better';
  return rest;
}

function toSignal(worse: boolean, better: boolean): Signal {
  return worse && better ? 'mixed' : worse ? 'worse' : better ? 'better' : 'same';
}

function decideSignal(severity: Severity, facts: VerdictFacts, previous: ReportCounts): Signal {
  const current = facts.current[severity];
  const before = previous[severity];
  // No result of this severity now: nothing of it was measured, so nothing of it got better or worse.
  if (current.count === 0) return 'same';
  // The change of pass ratio, exactly (cross-multiplied, no rounding); none when there were no results before.
  const ratio = before.count === 0 ? 0 : Math.sign(current.passed * before.count - before.passed * current.count);
  // Without the failing sets their counts stand in for them; the count before is 0 when there were no results then.
  const failingDelta = current.count - current.passed - (before.count - before.passed);
  const newly = facts.failingSetKnown ? facts.newlyFailing.some((p) => p.severity === severity) : failingDelta > 0;
  const fixed = facts.failingSetKnown ? facts.fixed.some((p) => p.severity === severity) : failingDelta < 0;
  return toSignal(ratio < 0 || newly, ratio > 0 || (fixed && ratio === 0));
}

import { COUNT_LINES, type ReportCounts, type Severity } from '../report';
import type { FailingPair } from './types';

/**
 * How a report compares with the previous one of its series, in one word. Every reader (subject, first
 * line, colours, digest, owner mails, dashboard, the `X-Compliance-Verdict` header) takes this value and
 * none decides again, so a mail cannot say "better" in green under a red HIGH box.
 */
export type Verdict = 'first' | 'better' | 'worse' | 'mixed' | 'same';

/** What one severity did: fell (or newly fails), rose (or got fixed), both at once, or neither. */
type Signal = 'worse' | 'better' | 'mixed' | 'same';

/** The facts the verdict is decided on. `newlyFailing`/`fixed` are empty when the failing sets are unknown. */
export interface VerdictFacts {
  current: ReportCounts;
  previous: ReportCounts | null;
  newlyFailing: readonly Pick<FailingPair, 'severity'>[];
  fixed: readonly Pick<FailingPair, 'severity'>[];
  /** Both failing sets are known, so `newlyFailing`/`fixed` are exact; when not, each severity's failing count stands in. */
  failingSetKnown: boolean;
}

/**
 * Decides the verdict, severity first. Per severity: a severity that had results and has none now was not
 * evaluated and says nothing; otherwise its pass ratio fell or one of its results newly fails (without the
 * failing sets: its failing count rose, also from no results before) → worse; its ratio rose or one of its
 * results was fixed (without the sets: its failing count fell) → better; both → mixed. Then HIGH dominates:
 * HIGH worse is "worse", or "mixed" when MIDDLE/LOW improved; HIGH mixed is "mixed"; HIGH better is "better"
 * unless MIDDLE/LOW got worse ("mixed"); HIGH unchanged leaves it to MIDDLE and LOW (either worse → worse,
 * either better → better, one each → mixed). Pure.
 */
export function decideVerdict(facts: VerdictFacts): { verdict: Verdict; scopeChanged: boolean } {
  const { current, previous } = facts;
  if (previous === null) return { verdict: 'first', scopeChanged: false };
  const signal = (severity: Severity) => decideSignal(severity, facts, previous);
  const rest = [signal('MIDDLE'), signal('LOW')];
  const restSignal = toSignal(
    rest.some((s) => s === 'worse' || s === 'mixed'),
    rest.some((s) => s === 'better' || s === 'mixed'),
  );
  return { verdict: applyHighFirst(signal('HIGH'), restSignal), scopeChanged: isScopeChanged(current, previous) };
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
  const ratio = compareRatios(current.passed, current.count, before.passed, before.count);
  let newly: boolean;
  let fixed: boolean;
  if (facts.failingSetKnown) {
    newly = facts.newlyFailing.some((p) => p.severity === severity);
    fixed = facts.fixed.some((p) => p.severity === severity);
  } else {
    // The failing counts stand in for the sets; the count before is 0 when there were no results then.
    const failingDelta = current.count - current.passed - (before.count - before.passed);
    newly = failingDelta > 0;
    fixed = failingDelta < 0;
  }
  return toSignal(ratio < 0 || newly, ratio > 0 || (fixed && ratio === 0));
}

/** Sign of (passed/count − previousPassed/previousCount), exactly (no rounding); 0 when either side has no results. */
function compareRatios(passed: number, count: number, previousPassed: number, previousCount: number): number {
  if (count === 0 || previousCount === 0) return 0;
  return Math.sign(passed * previousCount - previousPassed * count);
}

/** A result count differs (results are tests × devices; the history keeps only counts): percentages compare different things. */
function isScopeChanged(current: ReportCounts, previous: ReportCounts): boolean {
  return COUNT_LINES.some((line) => current[line].count !== previous[line].count);
}

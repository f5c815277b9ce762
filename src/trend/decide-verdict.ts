import { COUNT_LINES, type ReportCounts, type Severity } from '../report';
import { withoutFailed } from './build-deltas';
import type { FailingPair } from './types';

/**
 * How a report compares with the previous one of its series, in one word. Every reader (subject, first
 * line, colours, digest, owner mails, dashboard, the `X-Compliance-Verdict` header) takes this value and
 * none decides again, so a mail cannot say "better" in green under a red HIGH box.
 */
export type Verdict = 'first' | 'better' | 'worse' | 'mixed' | 'same';

/** What one severity did. */
type Signal = 'worse' | 'better' | 'mixed' | 'same';

/** The facts the verdict is decided on. `newlyFailing`/`fixed` are empty when the failing sets are unknown. */
export interface VerdictFacts {
  current: ReportCounts;
  previous: ReportCounts | null;
  /**
   * Previous failures not evaluated now (or not known to be), per severity: they leave the previous side of the
   * ratios (their disappearance is no improvement of anything evaluated), not the scope, which is as NetBox counted it.
   */
  notComparable?: Record<Severity, number>;
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

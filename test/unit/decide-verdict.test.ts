import type { ReportCounts, Severity } from '../../src/report';
import { decideVerdict, type Verdict } from '../../src/trend';

/** Counts from "passed/count" per severity; the total is their sum. */
function counts(high: string, middle: string, low: string): ReportCounts {
  const [hp, hc] = high.split('/').map(Number);
  const [mp, mc] = middle.split('/').map(Number);
  const [lp, lc] = low.split('/').map(Number);
  return {
    overall: { passed: hp + mp + lp, count: hc + mc + lc },
    HIGH: { passed: hp, count: hc },
    MIDDLE: { passed: mp, count: mc },
    LOW: { passed: lp, count: lc },
  };
}

const pairs = (...severities: Severity[]) => severities.map((severity) => ({ severity }));

/** Newly failing / fixed severities when both failing sets are known; `counts only` when they are not. */
type Sets = [Severity[], Severity[]] | 'counts only';

// previous → current, the failing sets, expected verdict and scope flag.
const TABLE: [string, ReportCounts | null, ReportCounts, Sets, Verdict, boolean][] = [
  ['no previous report', null, counts('9/10', '10/10', '10/10'), 'counts only', 'first', false],
  ['nothing changed', counts('9/10', '10/10', '10/10'), counts('9/10', '10/10', '10/10'), [[], []], 'same', false],
  ['nothing changed (counts only)', counts('9/10', '10/10', '10/10'), counts('9/10', '10/10', '10/10'), 'counts only', 'same', false],
  ['HIGH ratio rose, rest unchanged', counts('8/10', '10/10', '10/10'), counts('9/10', '10/10', '10/10'), [[], ['HIGH']], 'better', false],
  ['HIGH ratio fell', counts('9/10', '10/10', '10/10'), counts('8/10', '10/10', '10/10'), [['HIGH'], []], 'worse', false],
  ['HIGH fell while MIDDLE and LOW rose', counts('9/10', '2/10', '2/10'), counts('8/10', '9/10', '10/10'), [['HIGH'], []], 'mixed', false],
  ['HIGH fell and LOW fell', counts('9/10', '10/10', '10/10'), counts('8/10', '10/10', '9/10'), [['HIGH', 'LOW'], []], 'worse', false],
  ['HIGH fell, MIDDLE rose, LOW fell', counts('9/10', '8/10', '10/10'), counts('8/10', '9/10', '9/10'), [['HIGH'], []], 'worse', false],
  // Same HIGH ratio, but one HIGH result swapped for another: a newly failing HIGH result is never "better".
  [
    'HIGH swapped one failure for another',
    counts('9/10', '8/10', '10/10'),
    counts('9/10', '10/10', '10/10'),
    [['HIGH'], ['HIGH', 'MIDDLE']],
    'mixed',
    false,
  ],
  [
    'HIGH ratio rose but a HIGH result newly fails',
    counts('7/10', '10/10', '10/10'),
    counts('8/10', '10/10', '10/10'),
    [['HIGH'], ['HIGH', 'HIGH']],
    'mixed',
    false,
  ],
  ['HIGH rose, LOW fell', counts('8/10', '10/10', '10/10'), counts('9/10', '10/10', '9/10'), [['LOW'], ['HIGH']], 'mixed', false],
  ['HIGH same, MIDDLE fell', counts('10/10', '10/10', '10/10'), counts('10/10', '9/10', '10/10'), [['MIDDLE'], []], 'worse', false],
  ['HIGH same, LOW rose', counts('10/10', '10/10', '8/10'), counts('10/10', '10/10', '9/10'), [[], ['LOW']], 'better', false],
  [
    'HIGH same, MIDDLE rose, LOW fell',
    counts('10/10', '8/10', '10/10'),
    counts('10/10', '9/10', '9/10'),
    [['LOW'], ['MIDDLE']],
    'mixed',
    false,
  ],
  [
    'one MIDDLE result fixed, one LOW newly failing',
    counts('9/10', '9/10', '10/10'),
    counts('9/10', '10/10', '9/10'),
    [['LOW'], ['MIDDLE']],
    'mixed',
    false,
  ],
  ['a severity appeared with failures', counts('9/10', '0/0', '10/10'), counts('9/10', '3/4', '10/10'), [['MIDDLE'], []], 'worse', true],
  // A severity that had results and has none now was not evaluated: its failing pairs are not "fixed".
  [
    'HIGH had results, none now, its pairs gone',
    counts('5/10', '9/10', '10/10'),
    counts('0/0', '9/10', '10/10'),
    [[], ['HIGH']],
    'same',
    true,
  ],

  // Counts only (no NETBOX_URL, or NetBox could not answer): failing counts stand in for the sets.
  [
    'HIGH ratio rose, one fewer failing',
    counts('9/10', '10/10', '10/10'),
    counts('10/10', '10/10', '10/10'),
    'counts only',
    'better',
    false,
  ],
  // The README's two examples posted in order: seven HIGH failures where there were no HIGH results.
  ['the README example: 62.5 % then 88.0 %', counts('0/0', '5/8', '0/0'), counts('7/14', '58/64', '30/30'), 'counts only', 'worse', true],
  [
    'HIGH appeared with failures, rest unchanged',
    counts('0/0', '9/10', '10/10'),
    counts('7/8', '9/10', '10/10'),
    'counts only',
    'worse',
    true,
  ],
  [
    'HIGH appeared with failures, MIDDLE rose',
    counts('0/0', '8/10', '10/10'),
    counts('7/8', '9/10', '10/10'),
    'counts only',
    'mixed',
    true,
  ],
  ['HIGH appeared, all passing', counts('0/0', '9/10', '10/10'), counts('8/8', '9/10', '10/10'), 'counts only', 'same', true],
  ['HIGH had results, none now', counts('5/10', '9/10', '10/10'), counts('0/0', '9/10', '10/10'), 'counts only', 'same', true],
  [
    'HIGH had results, none now; MIDDLE fell',
    counts('5/10', '9/10', '10/10'),
    counts('0/0', '8/10', '10/10'),
    'counts only',
    'worse',
    true,
  ],
  ['HIGH had results, none now; LOW rose', counts('5/10', '9/10', '8/10'), counts('0/0', '9/10', '9/10'), 'counts only', 'better', true],
  [
    'HIGH more failing over more results, ratio rose',
    counts('9/10', '10/10', '10/10'),
    counts('27/29', '10/10', '10/10'),
    'counts only',
    'mixed',
    true,
  ],
  [
    'HIGH fewer failing over fewer results, ratio fell',
    counts('98/100', '10/10', '10/10'),
    counts('9/10', '10/10', '10/10'),
    'counts only',
    'worse',
    true,
  ],
  [
    'HIGH as many failing over more results',
    counts('9/10', '10/10', '10/10'),
    counts('19/20', '10/10', '10/10'),
    'counts only',
    'better',
    true,
  ],
  ['HIGH more failing, same ratio', counts('9/10', '10/10', '10/10'), counts('18/20', '10/10', '10/10'), 'counts only', 'worse', true],
  ['HIGH fewer failing, same ratio', counts('8/10', '10/10', '10/10'), counts('4/5', '10/10', '10/10'), 'counts only', 'better', true],
  [
    'more tests ran: ratios rose, more results fail',
    counts('1/2', '2/2', '2/4'),
    counts('30/36', '36/36', '30/36'),
    'counts only',
    'mixed',
    true,
  ],
];

/** The facts of a table row. */
function factsOf(previous: ReportCounts | null, current: ReportCounts, sets: Sets) {
  if (sets === 'counts only') return { current, previous, newlyFailing: [], fixed: [], failingSetKnown: false };
  return { current, previous, newlyFailing: pairs(...sets[0]), fixed: pairs(...sets[1]), failingSetKnown: true };
}

describe('the verdict (severity first)', () => {
  it.each(TABLE)('%s', (_name, previous, current, sets, verdict, scopeChanged) => {
    expect(decideVerdict(factsOf(previous, current, sets))).toEqual({ verdict, scopeChanged });
  });

  it('never says better when HIGH got worse, whatever the rest did', () => {
    const rest = ['5/10', '10/10'];
    for (const middle of rest)
      for (const low of rest)
        for (const newly of [[], ['HIGH']] as Severity[][]) {
          const { verdict } = decideVerdict({
            previous: counts('9/10', '5/10', '5/10'),
            current: counts(newly.length ? '9/10' : '8/10', middle, low),
            newlyFailing: pairs(...newly),
            fixed: [],
            failingSetKnown: true,
          });
          expect(['worse', 'mixed']).toContain(verdict);
        }
  });
});

import { decideVerdict, type ReportCounts, type Verdict } from '../../src/trend';
import type { Severity } from '../../src/report';

/** Counts from "passed/count" per severity; the total is their sum. */
function counts(high: string, middle: string, low: string): ReportCounts {
  const [hp, hc] = high.split('/').map(Number);
  const [mp, mc] = middle.split('/').map(Number);
  const [lp, lc] = low.split('/').map(Number);
  return {
    totalPassed: hp + mp + lp,
    totalCount: hc + mc + lc,
    highPassed: hp,
    highCount: hc,
    middlePassed: mp,
    middleCount: mc,
    lowPassed: lp,
    lowCount: lc,
  };
}

const pairs = (...severities: Severity[]) => severities.map((severity) => ({ severity }));

// previous → current, newly failing / fixed severities, expected verdict and scope flag.
const TABLE: [string, ReportCounts | null, ReportCounts, Severity[], Severity[], Verdict, boolean][] = [
  ['no previous report', null, counts('9/10', '10/10', '10/10'), [], [], 'first', false],
  ['nothing changed', counts('9/10', '10/10', '10/10'), counts('9/10', '10/10', '10/10'), [], [], 'same', false],
  ['HIGH ratio rose, rest unchanged', counts('8/10', '10/10', '10/10'), counts('9/10', '10/10', '10/10'), [], ['HIGH'], 'better', false],
  ['HIGH ratio fell', counts('9/10', '10/10', '10/10'), counts('8/10', '10/10', '10/10'), ['HIGH'], [], 'worse', false],
  // The README's second example: overall rose a lot, HIGH fell. Never "better".
  ['HIGH fell while MIDDLE and LOW rose', counts('9/10', '2/10', '2/10'), counts('8/10', '9/10', '10/10'), ['HIGH'], [], 'mixed', false],
  ['HIGH fell and LOW fell', counts('9/10', '10/10', '10/10'), counts('8/10', '10/10', '9/10'), ['HIGH', 'LOW'], [], 'worse', false],
  ['HIGH fell, MIDDLE rose, LOW fell', counts('9/10', '8/10', '10/10'), counts('8/10', '9/10', '9/10'), ['HIGH'], [], 'worse', false],
  // Same HIGH ratio, but one HIGH result swapped for another: a newly failing HIGH result is never "better".
  [
    'HIGH swapped one failure for another',
    counts('9/10', '8/10', '10/10'),
    counts('9/10', '10/10', '10/10'),
    ['HIGH'],
    ['HIGH', 'MIDDLE'],
    'mixed',
    false,
  ],
  [
    'HIGH ratio rose but a HIGH result newly fails',
    counts('7/10', '10/10', '10/10'),
    counts('8/10', '10/10', '10/10'),
    ['HIGH'],
    ['HIGH', 'HIGH'],
    'mixed',
    false,
  ],
  ['HIGH rose, LOW fell', counts('8/10', '10/10', '10/10'), counts('9/10', '10/10', '9/10'), ['LOW'], ['HIGH'], 'mixed', false],
  ['HIGH same, MIDDLE fell', counts('10/10', '10/10', '10/10'), counts('10/10', '9/10', '10/10'), ['MIDDLE'], [], 'worse', false],
  ['HIGH same, LOW rose', counts('10/10', '10/10', '8/10'), counts('10/10', '10/10', '9/10'), [], ['LOW'], 'better', false],
  [
    'HIGH same, MIDDLE rose, LOW fell',
    counts('10/10', '8/10', '10/10'),
    counts('10/10', '9/10', '9/10'),
    ['LOW'],
    ['MIDDLE'],
    'mixed',
    false,
  ],
  ['failing sets unknown, only ratios', counts('9/10', '10/10', '10/10'), counts('10/10', '10/10', '10/10'), [], [], 'better', false],
  // Different scope: the verdict still reads the ratios and the flag says they compare different results.
  ['more tests ran, HIGH ratio rose', counts('1/2', '2/2', '2/4'), counts('30/36', '36/36', '30/36'), [], [], 'better', true],
  [
    'one MIDDLE result fixed, one LOW newly failing',
    counts('9/10', '9/10', '10/10'),
    counts('9/10', '10/10', '9/10'),
    ['LOW'],
    ['MIDDLE'],
    'mixed',
    false,
  ],
  ['a severity appeared', counts('9/10', '0/0', '10/10'), counts('9/10', '3/4', '10/10'), ['MIDDLE'], [], 'worse', true],
];

describe('the verdict (severity first)', () => {
  it.each(TABLE)('%s', (_name, previous, current, newly, fixed, verdict, scopeChanged) => {
    expect(decideVerdict({ current, previous, newlyFailing: pairs(...newly), fixed: pairs(...fixed) })).toEqual({ verdict, scopeChanged });
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
          });
          expect(['worse', 'mixed']).toContain(verdict);
        }
  });
});

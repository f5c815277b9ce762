import type { FailingPair, PairStates, Trend } from '../trend';

/** Devices (or deleted tests) named in a line; the rest is a count. */
const EVALUATION_LINE_NAMES = 10;

/** The mail's lines about what one of the two reports did not evaluate, or could not be told; each null when there is nothing to say. */
export interface EvaluationLines {
  notEvaluatedLine: string | null;
  notEvaluatedBeforeLine: string | null;
  undeterminedLine: string | null;
}

/**
 * Words the trend's not-evaluated pairs once, compactly: pairs of a test deleted from NetBox under that
 * test, the others per device ("sw3 (3 tests)", "sw4 (ntp-synced)"), and what NetBox could not tell. Pure.
 */
export function buildEvaluationLines(trend: Trend, reading: PairStates | null): EvaluationLines {
  const previousId = trend.previous?.reportId ?? 0;
  const deletedTests = new Set(reading?.deletedTests ?? []);
  const deletedDevices = new Set(reading?.deletedDevices ?? []);
  const describe = (pairs: readonly FailingPair[]) => describePairs(pairs, deletedTests, deletedDevices);
  const unknown: string[] = [];
  if (trend.undeterminedCount > 0)
    unknown.push(
      `${count(trend.undeterminedCount, 'result')} that failed in report ${previousId} ${trend.undeterminedCount === 1 ? 'does' : 'do'} not fail now: fixed and not evaluated could not be told apart this time, so neither is listed`,
    );
  if (trend.undeterminedBeforeCount > 0)
    unknown.push(
      `${count(trend.undeterminedBeforeCount, 'failing result')} did not fail in report ${previousId}: whether ${trend.undeterminedBeforeCount === 1 ? 'it' : 'they'} passed there or ${trend.undeterminedBeforeCount === 1 ? 'was' : 'were'} not evaluated could not be told, so ${trend.undeterminedBeforeCount === 1 ? 'it is' : 'they are'} not called newly failing`,
    );
  return {
    notEvaluatedLine: trend.notEvaluated.length
      ? `Not evaluated this time: ${describe(trend.notEvaluated)} \u2014 no results in this report.`
      : null,
    notEvaluatedBeforeLine: trend.notEvaluatedBefore.length
      ? `No results in report ${previousId} (new since, or not evaluated there): ${describe(trend.notEvaluatedBefore)}.`
      : null,
    undeterminedLine: unknown.length ? `${capitalize(unknown.join('; '))} (${reading?.unknownReason ?? 'NetBox was not asked'}).` : null,
  };
}

/** "test bgp-up (deleted from NetBox; 4 devices), sw3 (3 tests), sw4 (ntp-synced) and 2 more devices". */
function describePairs(pairs: readonly FailingPair[], deletedTests: ReadonlySet<string>, deletedDevices: ReadonlySet<string>): string {
  const byTest = new Map<string, number>();
  const byDevice = new Map<string, string[]>();
  for (const pair of pairs) {
    if (deletedTests.has(pair.test)) byTest.set(pair.test, (byTest.get(pair.test) ?? 0) + 1);
    else byDevice.set(pair.device, [...(byDevice.get(pair.device) ?? []), pair.test]);
  }
  const named = [
    ...[...byTest].map(([test, devices]) => `test ${test} (deleted from NetBox; ${count(devices, 'device')})`),
    ...[...byDevice].map(([device, tests]) => {
      const which = tests.length === 1 ? tests[0] : count(tests.length, 'test');
      return `${device} (${deletedDevices.has(device) ? `deleted from NetBox; ${which}` : which})`;
    }),
  ];
  const shown = named.slice(0, EVALUATION_LINE_NAMES);
  const more = named.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

/** "1 result", "3 results". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

import {
  buildDevicesTrend,
  buildPeriodTrend,
  buildTrend,
  pairKey,
  type FailingPair,
  type PairStates,
  type ReportSnapshot,
} from '../../src/trend';

const HIGH_TEST = 'ntp-synced';
const pair = (device: string, test = HIGH_TEST): FailingPair => ({ device, test, severity: 'HIGH' });

/** A report of HIGH results only: `count` results, the given pairs failing. */
function report(id: number, count: number, failing: FailingPair[]): ReportSnapshot {
  const created = `2026-03-0${id}T10:00:00Z`;
  return {
    dedupKey: `${id}@${created}`,
    series: 's',
    reportId: id,
    created,
    createdMs: Date.parse(created),
    counts: {
      overall: { passed: count - failing.length, count: count },
      HIGH: { passed: count - failing.length, count: count },
      MIDDLE: { passed: 0, count: 0 },
      LOW: { passed: 0, count: 0 },
    },
    failing,
  };
}

const states = (now: [FailingPair, boolean][] | null, before: [FailingPair, boolean][] | null = []): PairStates => ({
  now: now && new Map(now.map(([p, v]) => [pairKey(p), v])),
  before: before && new Map(before.map(([p, v]) => [pairKey(p), v])),
  deletedTests: [],
  deletedDevices: [],
  unknownReason: null,
});

describe('three states per (device, test): failing, passed, not evaluated', () => {
  // sw3 failed in report 1 (10 results, 1 failing); report 2 does not fail it.
  const r1 = report(1, 10, [pair('sw3'), pair('sw4')]);
  const table: {
    name: string;
    current: ReportSnapshot;
    states: PairStates;
    verdict: string;
    fixed: string[];
    notEvaluated: string[];
    undetermined: number;
  }[] = [
    {
      name: 'NetBox shows it passed: fixed, and the verdict counts it',
      current: report(2, 10, [pair('sw4')]),
      states: states([[pair('sw3'), true]]),
      verdict: 'better',
      fixed: ['sw3'],
      notEvaluated: [],
      undetermined: 0,
    },
    {
      name: 'no result in this report (sw3 dropped out with its one result): not evaluated, the verdict unmoved',
      current: report(2, 9, [pair('sw4')]),
      states: states([[pair('sw3'), false]]),
      verdict: 'same',
      fixed: [],
      notEvaluated: ['sw3'],
      undetermined: 0,
    },
    {
      name: 'NetBox could not tell: neither fixed nor not evaluated, the verdict unmoved',
      current: report(2, 9, [pair('sw4')]),
      states: states(null),
      verdict: 'same',
      fixed: [],
      notEvaluated: [],
      undetermined: 1,
    },
    {
      name: 'a pair the states do not name is one NetBox could not tell',
      current: report(2, 9, [pair('sw4')]),
      states: states([]),
      verdict: 'same',
      fixed: [],
      notEvaluated: [],
      undetermined: 1,
    },
  ];
  it.each(table)('$name', (row) => {
    const trend = buildTrend(row.current, [r1], { states: row.states });
    expect(trend.verdict).toBe(row.verdict);
    expect(trend.fixed.map((p) => p.device)).toEqual(row.fixed);
    expect(trend.fixed).toHaveLength(row.fixed.length);
    expect(trend.notEvaluated.map((p) => p.device)).toEqual(row.notEvaluated);
    expect(trend.undeterminedCount).toBe(row.undetermined);
    expect(trend.newlyFailing).toEqual([]);
    // The deltas stay NetBox's own whatever the states.
    expect(trend.overall?.percent).toBe(Math.round((1000 * row.current.counts.overall.passed) / row.current.counts.overall.count) / 10);
  });

  it('calls a pair newly failing only when it passed in the previous report', () => {
    const before = report(1, 10, []);
    const now = report(2, 12, [pair('sw1'), pair('sw9'), pair('sw7')]);
    const trend = buildTrend(now, [before], {
      states: states(
        [],
        [
          [pair('sw1'), true],
          [pair('sw9'), false],
        ],
      ),
    });
    expect(trend.newlyFailing.map((p) => p.device)).toEqual(['sw1']);
    expect(trend.notEvaluatedBefore.map((p) => p.device)).toEqual(['sw9']);
    expect(trend.undeterminedBeforeCount).toBe(1);
    expect(trend.badges.get(pairKey(pair('sw1')))).toEqual({ kind: 'new' });
    expect(trend.badges.get(pairKey(pair('sw9')))).toEqual({ kind: 'unseen' });
    expect(trend.badges.get(pairKey(pair('sw7')))).toEqual({ kind: 'unknown' });
    expect(trend.regression).toBe(true);
  });

  it('after a report that did not evaluate sw3, sw3 failing again is not "newly failing"', () => {
    const first = report(1, 10, [pair('sw3')]);
    const second = report(2, 9, []);
    const third = report(3, 10, [pair('sw3')]);
    const atSecond = buildTrend(second, [first], { states: states([[pair('sw3'), false]]) });
    expect(atSecond.notEvaluated.map((p) => p.device)).toEqual(['sw3']);
    expect(atSecond.fixed).toHaveLength(0);
    // Report 2 has no result for sw3: what the relay knows is exactly that, not that it passed in between.
    const atThird = buildTrend(third, [second, first], { states: states([], [[pair('sw3'), false]]) });
    expect(atThird.newlyFailing).toHaveLength(0);
    expect(atThird.notEvaluatedBefore.map((p) => p.device)).toEqual(['sw3']);
    expect(atThird.badges.get(pairKey(pair('sw3')))).toEqual({ kind: 'unseen' });
  });

  it('an owner group: a device of the group that dropped out is neither fixed nor a better verdict', () => {
    const trend = buildDevicesTrend(report(2, 9, [pair('sw4')]), [r1], {
      devices: new Set(['sw3', 'sw4']),
      states: states([[pair('sw3'), false]]),
    });
    expect(trend?.fixed).toHaveLength(0);
    expect(trend?.notEvaluated.map((p) => p.device)).toEqual(['sw3']);
    expect(trend?.verdict).toBe('same');
  });
});

describe("a digest's period: fixed only when a report of the period showed the pair passed", () => {
  it('reads each pair from the report right after its last failure, as that report recorded it', () => {
    const r1 = report(1, 10, [pair('sw3'), pair('sw4'), pair('sw5')]);
    // Report 2: sw4 passed, sw3 had no result; sw5 still fails. Report 3: sw5 stops failing, its state not kept.
    const r2 = {
      ...report(2, 9, [pair('sw5')]),
      states: states([
        [pair('sw3'), false],
        [pair('sw4'), true],
      ]),
    };
    const r3 = { ...report(3, 9, []), states: states(null) };
    const change = buildPeriodTrend([r2, r3], r1).change;
    expect(change.fixed.map((p) => p.device)).toEqual(['sw4']);
    expect(change.notEvaluated.map((p) => p.device)).toEqual(['sw3']);
    expect(change.undeterminedCount).toBe(1);
  });

  it('reports stored before the states were kept count their pairs as evaluated, as the relay did then', () => {
    const change = buildPeriodTrend([report(2, 10, [])], report(1, 10, [pair('sw3')])).change;
    expect(change.fixed.map((p) => p.device)).toEqual(['sw3']);
  });
});

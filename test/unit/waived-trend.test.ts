/**
 * What accepted exceptions do below the mail: the trend compares without the left-out pairs (verdict,
 * failing-set change, regression) while its deltas keep validity's figures, and routes neither remind
 * nor mail a first report for accepted exceptions alone.
 */
import { parseRoutesFile, planRoutes, type ReportFacts } from '../../src/routing';
import { buildTrend, pairKey, type FailingPair, type ReportSnapshot } from '../../src/trend';

const telnet = (device: string): FailingPair => ({ device, test: 'telnet-disabled', severity: 'HIGH' });
const ntp = (device: string): FailingPair => ({ device, test: 'ntp-synced', severity: 'MIDDLE' });

function snapshot(id: number, created: string, failing: FailingPair[]): ReportSnapshot {
  const high = failing.filter((p) => p.severity === 'HIGH').length;
  const middle = failing.filter((p) => p.severity === 'MIDDLE').length;
  return {
    dedupKey: `${id}@${created}`,
    series: 's',
    reportId: id,
    created,
    createdMs: Date.parse(created),
    counts: {
      overall: { passed: 20 - high - middle, count: 20 },
      HIGH: { passed: 10 - high, count: 10 },
      MIDDLE: { passed: 10 - middle, count: 10 },
      LOW: { passed: 0, count: 0 },
    },
    failing,
  };
}

const keys = (...pairs: FailingPair[]) => new Set(pairs.map(pairKey));
const none = new Set<string>();

describe('a trend with accepted exceptions left out', () => {
  const before = snapshot(1, '2026-11-27T08:00:00Z', [ntp('sw2')]);
  const now = snapshot(2, '2026-11-28T08:00:00Z', [telnet('lab-sw1'), ntp('sw2')]);

  it('without them, a newly failing HIGH pair makes it worse', () => {
    const trend = buildTrend(now, [before]);
    expect(trend.verdict).toBe('worse');
    expect(trend.failingSetChanged).toBe(true);
    expect(trend.newlyFailing).toHaveLength(1);
  });

  it('a waived newly failing pair changes neither the verdict nor the failing set; the deltas stay validity`s', () => {
    const trend = buildTrend(now, [before], { leftOut: { current: keys(telnet('lab-sw1')), previous: none } });
    expect(trend.verdict).toBe('same');
    expect(trend.failingSetChanged).toBe(false);
    expect(trend.regression).toBe(false);
    expect(trend.newlyFailing).toHaveLength(0);
    expect(trend.leftOut).toEqual({ HIGH: 1, MIDDLE: 0, LOW: 0 });
    expect(trend.severities.find((d) => d.name === 'HIGH')).toMatchObject({ failed: 1, previousFailed: 0, deltaFailedText: '+1 failing' });
  });

  it('a pair left out of the previous report only (its waiver ended) comes back as newly failing', () => {
    const earlier = snapshot(1, '2026-11-27T08:00:00Z', [telnet('lab-sw1'), ntp('sw2')]);
    const trend = buildTrend(now, [earlier], { leftOut: { current: none, previous: keys(telnet('lab-sw1')) } });
    expect(trend.verdict).toBe('worse');
    expect(trend.newlyFailing).toEqual([telnet('lab-sw1')]);
    expect(trend.badges.get(pairKey(telnet('lab-sw1')))).toEqual({ kind: 'new' });
  });

  it('routes: no reminder and no first-report mail for accepted exceptions alone', () => {
    const routes = parseRoutesFile('routes:\n  - name: r\n    to: a@example.com\n    notify: on-change\n    repeat_after: 1d\n', 'r.yaml');
    const facts = (id: number, completedAt: string): ReportFacts => ({
      reportId: id,
      completedAt,
      counts: {
        HIGH: { passed: 9, count: 10 },
        MIDDLE: { passed: 10, count: 10 },
        LOW: { passed: 0, count: 0 },
        overall: { passed: 19, count: 20 },
      },
      customFields: {},
      source: { name: 'default', tags: {} },
    });
    const only = [telnet('lab-sw1')];
    const first = snapshot(1, '2026-11-27T08:00:00Z', only);
    const waived = { current: keys(...only), previous: keys(...only) };
    const firstTrend = buildTrend(first, [], { leftOut: waived });
    expect(planRoutes(routes, facts(1, first.created), firstTrend, () => null)[0]).toMatchObject({
      outcome: 'suppressed',
      reason: expect.stringContaining('every failure an accepted exception'),
    });
    const later = snapshot(2, '2026-12-05T08:00:00Z', only);
    const laterFacts = facts(2, later.created);
    const trend = buildTrend(later, [first], { leftOut: waived });
    // A week after the last mail: a reminder would be due, but what fails is accepted.
    expect(planRoutes(routes, laterFacts, trend, () => first.created)[0]).toMatchObject({ outcome: 'suppressed', reminder: false });
    const unwaived = buildTrend(later, [first]);
    expect(planRoutes(routes, laterFacts, unwaived, () => first.created)[0]).toMatchObject({ outcome: 'send', reminder: true });
  });
});

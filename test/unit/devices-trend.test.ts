import fs from 'node:fs';
import { SqliteStore } from '../../src/store';
import { buildDevicesTrend, buildTrend, pairKey, type FailingPair, type ReportSnapshot } from '../../src/trend';
import { makeTempDir } from '../helpers/relay-harness';
import { recordTrend, reportHistoryOf } from '../helpers/store-writes';

const ntp = (device: string): FailingPair => ({ device, test: 'ntp-servers', severity: 'HIGH' });
const snmp = (device: string): FailingPair => ({ device, test: 'snmp-community', severity: 'MIDDLE' });
const banner = (device: string): FailingPair => ({ device, test: 'login-banner', severity: 'LOW' });

/** Four devices, one result per device and severity (12 results); counts follow the failing pairs. */
function report(id: number, failing: FailingPair[] | null, known = failing): ReportSnapshot {
  const created = new Date(Date.UTC(2026, 2, id)).toISOString();
  const failed = (severity: FailingPair['severity']) => (known ?? []).filter((p) => p.severity === severity).length;
  return {
    dedupKey: `${id}@${created}`,
    series: 's',
    reportId: id,
    created,
    createdMs: Date.parse(created),
    counts: {
      overall: { passed: 12 - (known ?? []).length, count: 12 },
      HIGH: { passed: 4 - failed('HIGH'), count: 4 },
      MIDDLE: { passed: 4 - failed('MIDDLE'), count: 4 },
      LOW: { passed: 4 - failed('LOW'), count: 4 },
    },
    failing,
  };
}

const FRA = new Set(['fra-1', 'fra-2']);
const AMS = new Set(['ams-1']);

describe("an owner group's trend: its devices' failing results against the previous report", () => {
  // The whole report improves on HIGH (ams-1 fixed ntp) while fra-1 newly fails snmp: "mixed" as a whole.
  const before = report(1, [ntp('ams-1'), snmp('ams-1'), ntp('lon-1')]);
  const now = report(2, [snmp('fra-1'), snmp('ams-1'), ntp('lon-1')]);

  it('decides each group on its own devices, with the same rule as the whole report', () => {
    expect(buildTrend(now, [before]).verdict).toBe('mixed');
    const fra = buildDevicesTrend(now, [before], { devices: FRA })!;
    expect(fra).toMatchObject({ verdict: 'worse', scopeChanged: false, devicesOnly: true, fixed: [] });
    expect(fra.newlyFailing).toEqual([snmp('fra-1')]);
    expect(fra.overall).toMatchObject({
      failed: 1,
      previousFailed: 0,
      deltaFailedText: '+1 failing',
      deltaPoints: null,
      direction: 'worse',
    });
    const ams = buildDevicesTrend(now, [before], { devices: AMS })!;
    expect(ams).toMatchObject({ verdict: 'better', newlyFailing: [], fixed: [ntp('ams-1')] });
    expect(ams.severities.find((d) => d.name === 'HIGH')).toMatchObject({ failed: 0, previousFailed: 1, direction: 'better' });
  });

  it.each([
    ['HIGH newly failing while MIDDLE got fixed', [snmp('fra-1')], [ntp('fra-1')], 'mixed'],
    ['HIGH newly failing alone', [], [ntp('fra-1')], 'worse'],
    ['HIGH fixed while LOW newly fails', [ntp('fra-1')], [banner('fra-2')], 'mixed'],
    ['LOW fixed alone', [banner('fra-1'), banner('fra-2')], [banner('fra-2')], 'better'],
    ['nothing changed on these devices', [snmp('fra-2')], [snmp('fra-2'), ntp('ams-1')], 'same'],
  ] as const)('%s: %s', (_name, was, is, verdict) => {
    expect(buildDevicesTrend(report(2, [...is]), [report(1, [...was])], { devices: FRA })?.verdict).toBe(verdict);
  });

  it("gives the group's percentages when its counts are known, and badges and streaks for its pairs only", () => {
    const older = report(1, [snmp('fra-1'), snmp('ams-1')]);
    const trend = buildDevicesTrend(now, [before, older], {
      devices: new Set(['ams-1']),
      counts: { HIGH: { passed: 1, count: 1 }, MIDDLE: { passed: 0, count: 1 }, LOW: { passed: 1, count: 1 } },
    })!;
    expect(trend.overall).toMatchObject({ percent: 66.7, previousPercent: null, deltaPointsText: '—' });
    expect(trend.stillFailing).toEqual([expect.objectContaining({ device: 'ams-1', test: 'snmp-community', reports: 3 })]);
    expect([...trend.badges.keys()]).toHaveLength(1);
  });

  it('is "first" without a previous report, and unknown (null) when either failing set is', () => {
    expect(buildDevicesTrend(now, [], { devices: FRA })?.verdict).toBe('first');
    expect(buildDevicesTrend(now, [report(1, null, [ntp('x')])], { devices: FRA })).toBeNull();
    expect(buildDevicesTrend(report(2, null, [ntp('x')]), [before], { devices: FRA })).toBeNull();
  });

  it('leaves accepted exceptions out of the decision, as the whole trend does', () => {
    const leftOut = { current: new Set(['snmp-community\u0000fra-1']), previous: new Set<string>() };
    expect(buildDevicesTrend(now, [before], { devices: FRA, leftOut })).toMatchObject({ verdict: 'same', newlyFailing: [] });
  });

  it("counts an accepted exception as passed in the group's figures, on every device of the group alike", () => {
    // fra-1 fails snmp (accepted) and ntp; fra-2 fails only snmp (accepted): both reports, so nothing changed.
    const failing = [snmp('fra-1'), ntp('fra-1'), snmp('fra-2')];
    const accepted = new Set([snmp('fra-1'), snmp('fra-2')].map(pairKey));
    const leftOut = { current: accepted, previous: accepted };
    const trend = buildDevicesTrend(report(2, failing), [report(1, failing)], { devices: new Set(['fra-1']), leftOut })!;
    expect(trend).toMatchObject({ verdict: 'same', leftOut: { HIGH: 0, MIDDLE: 0, LOW: 0 } });
    expect(trend.overall).toMatchObject({ failed: 1, previousFailed: 1 });
    expect(trend.severities.find((d) => d.name === 'MIDDLE')).toMatchObject({ failed: 0, previousFailed: 0 });
  });

  it("is recorded with the report: the history read once serves every group's trend", async () => {
    const dir = makeTempDir('devices-trend-');
    const store = SqliteStore.open({ dataDir: dir });
    try {
      await recordTrend(reportHistoryOf(store), before);
      const recorded = await recordTrend(reportHistoryOf(store), now);
      expect(recorded.trend.verdict).toBe('mixed');
      expect(buildDevicesTrend(recorded.current, recorded.history, { ...recorded.options, devices: FRA })?.verdict).toBe('worse');
      expect(buildDevicesTrend(recorded.current, recorded.history, { ...recorded.options, devices: AMS })?.verdict).toBe('better');
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

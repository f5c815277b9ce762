import fs from 'node:fs';
import { SqliteStore } from '../../src/store';
import { buildTrendView } from '../../src/compose';
import { buildReportSnapshot, buildTrend, buildDevicesTrend, type FailingPair, type ReportSnapshot } from '../../src/trend';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { recordTrend, reportHistoryOf } from '../helpers/store-writes';

/** The whole report's trend, as the mail reads it. */
const record = async (...args: Parameters<typeof recordTrend>) => (await recordTrend(...args)).trend;

const SERIES = 'https://netbox.example.com|';

function snapshot(
  id: number,
  created: string,
  counts: Partial<ReportSnapshot['counts']>,
  failing: FailingPair[] | null,
  series = SERIES,
): ReportSnapshot {
  return {
    dedupKey: `${id}@${created}`,
    series,
    reportId: id,
    created,
    createdMs: Date.parse(created),
    counts: {
      overall: { passed: 0, count: 0 },
      HIGH: { passed: 0, count: 0 },
      MIDDLE: { passed: 0, count: 0 },
      LOW: { passed: 0, count: 0 },
      ...counts,
    },
    failing,
  };
}

const ntp = (device: string): FailingPair => ({ device, test: 'ntp-servers', severity: 'HIGH' });
const snmp = (device: string): FailingPair => ({ device, test: 'snmp-community', severity: 'MIDDLE' });

describe('report trend', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dir = makeTempDir('trend-');
    store = SqliteStore.open({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says there is nothing to compare with for the first report', async () => {
    const trend = await record(
      reportHistoryOf(store),
      snapshot(1, '2026-03-01T10:00:00Z', { overall: { passed: 7, count: 9 } }, [ntp('sw1'), ntp('sw2')]),
    );
    expect(trend.previous).toBeNull();
    expect(trend.overall).toBeNull();
    expect(trend.failingSetChanged).toBeNull();
    expect(trend.regression).toBe(false);
  });

  it('follows three successive reports: a fix, a new failure, deltas and streaks', async () => {
    const r1 = snapshot(
      10,
      '2026-03-01T10:00:00Z',
      { overall: { passed: 6, count: 9 }, HIGH: { passed: 1, count: 3 }, MIDDLE: { passed: 5, count: 6 } },
      [ntp('sw1'), ntp('sw2'), snmp('sw3')],
    );
    const r2 = snapshot(
      11,
      '2026-03-02T10:00:00Z',
      { overall: { passed: 7, count: 9 }, HIGH: { passed: 2, count: 3 }, MIDDLE: { passed: 5, count: 6 } },
      [ntp('sw1'), snmp('sw3')],
    );
    const r3 = snapshot(
      12,
      '2026-03-03T10:00:00Z',
      { overall: { passed: 6, count: 9 }, HIGH: { passed: 1, count: 3 }, MIDDLE: { passed: 5, count: 6 } },
      [ntp('sw1'), snmp('sw3'), ntp('sw9')],
    );
    await record(reportHistoryOf(store), r1);
    const t2 = await record(reportHistoryOf(store), r2);
    expect(t2.previous).toEqual({ reportId: 10, created: '2026-03-01T10:00:00Z', dedupKey: r1.dedupKey });
    expect(t2.fixed).toEqual([ntp('sw2')]);
    expect(t2.newlyFailing).toEqual([]);
    expect(t2.overall).toMatchObject({
      percent: 77.8,
      previousPercent: 66.7,
      deltaPointsText: '+11.1 pts',
      deltaFailedText: '\u22121 failing',
      direction: 'better',
    });
    // Deltas of the percentages as shown (66.7% − 33.3%), so the mail's numbers add up.
    expect(t2.severities.map((s) => [s.name, s.deltaPointsText])).toEqual([
      ['HIGH', '+33.4 pts'],
      ['MIDDLE', '±0.0 pts'],
      ['LOW', '—'],
    ]);
    expect(t2.regression).toBe(false);
    expect(t2.failingSetChanged).toBe(true);

    const t3 = await record(reportHistoryOf(store), {
      ...r3,
      counts: { ...r3.counts, MIDDLE: { ...r3.counts.MIDDLE, passed: 4 }, overall: { ...r3.counts.overall, passed: 5 } },
    });
    expect(t3.newlyFailing).toEqual([ntp('sw9')]);
    expect(t3.fixed).toEqual([]);
    expect(t3.regression).toBe(true);
    expect(t3.overall?.deltaFailedText).toBe('+2 failing');
    expect(t3.stillFailing).toEqual([
      { ...ntp('sw1'), reports: 3, sinceReportId: 10, sinceCreated: '2026-03-01T10:00:00Z', atLeast: false },
      { ...snmp('sw3'), reports: 3, sinceReportId: 10, sinceCreated: '2026-03-01T10:00:00Z', atLeast: false },
    ]);
  });

  it('keeps the NetBox ids of the pairs the previous report failed, and measures streaks past it', async () => {
    // The walk reads the previous report whole and the older ones without ids: what a mail links to comes from the first.
    const withIds = (pair: FailingPair, result: number): FailingPair => ({ ...pair, ids: { result, device: result + 1, test: 9 } });
    await record(reportHistoryOf(store), snapshot(1, '2026-03-01T10:00:00Z', {}, [withIds(ntp('sw1'), 100), withIds(ntp('sw2'), 110)]));
    await record(reportHistoryOf(store), snapshot(2, '2026-03-02T10:00:00Z', {}, [withIds(ntp('sw1'), 200), withIds(ntp('sw2'), 210)]));
    const trend = await record(reportHistoryOf(store), snapshot(3, '2026-03-03T10:00:00Z', {}, [withIds(ntp('sw1'), 300)]));
    expect(trend.fixed).toEqual([withIds(ntp('sw2'), 210)]);
    // Its device, with NetBox's id, for the owner mails that count its fix.
    expect(trend.fixedDevices).toEqual([{ name: 'sw2', id: 211 }]);
    expect(trend.stillFailing).toEqual([
      { ...withIds(ntp('sw1'), 300), reports: 3, sinceReportId: 1, sinceCreated: '2026-03-01T10:00:00Z', atLeast: false },
    ]);
  });

  it('lists every fixed device once, past the cap of listed pairs', () => {
    const devices = Array.from({ length: 25 }, (_, i) => `sw${String(i).padStart(2, '0')}`);
    const before = snapshot(1, '2026-03-01T10:00:00Z', {}, [...devices.map(ntp), ...devices.map(snmp)]);
    const trend = buildTrend(snapshot(2, '2026-03-02T10:00:00Z', {}, []), [before]);
    expect(trend.fixed).toHaveLength(50);
    const view = buildTrendView(trend, { timezone: 'UTC', basePath: '', currentFailingKnown: true, passed: 0, count: 0 });
    expect(view.fixed).toHaveLength(20);
    expect(view.moreFixed).toBe(30);
    expect(trend.fixedDevices.map((d) => d.name)).toEqual(devices);
    expect(trend.fixedDevices.every((d) => d.id === null)).toBe(true);
  });

  it('compares a report that arrives late with the one created before it', async () => {
    await record(reportHistoryOf(store), snapshot(20, '2026-03-01T10:00:00Z', { overall: { passed: 1, count: 2 } }, [ntp('a')]));
    await record(reportHistoryOf(store), snapshot(22, '2026-03-03T10:00:00Z', { overall: { passed: 2, count: 2 } }, []));
    const late = await record(
      reportHistoryOf(store),
      snapshot(21, '2026-03-02T10:00:00Z', { overall: { passed: 0, count: 2 } }, [ntp('a'), ntp('b')]),
    );
    expect(late.previous?.reportId).toBe(20);
    expect(late.newlyFailing).toEqual([ntp('b')]);
  });

  /** A report's webhook stored as the webhook route stores it: its row in the history written with it. */
  async function arrive(id: number, created: string, counts: Record<string, number>): Promise<ReportSnapshot> {
    const body = buildBody({ data: buildReportData({ id, created, ...counts }) });
    const parsed = parseDelivery(body);
    if (parsed.kind !== 'report') throw new Error('not a report');
    await store.insertDelivery({
      ...parsed,
      sender: '127.0.0.1',
      body,
      receivedAt: Date.now(),
      series: SERIES,
    });
    return buildReportSnapshot(parsed, SERIES, null);
  }

  it('compares with a predecessor stored but not yet composed on its counts, and says so', async () => {
    const counts = { total_passed: 9, total_count: 10, high_passed: 4, high_count: 5, middle_passed: 5, middle_count: 5 };
    await arrive(30, '2026-03-01T10:00:00Z', { ...counts, low_passed: 0, low_count: 0 });
    const { trend } = await recordTrend(
      reportHistoryOf(store),
      snapshot(
        31,
        '2026-03-02T10:00:00Z',
        { overall: { passed: 7, count: 10 }, HIGH: { passed: 2, count: 5 }, MIDDLE: { passed: 5, count: 5 } },
        [ntp('a'), ntp('b'), ntp('c')],
      ),
    );
    expect(trend.previous).toMatchObject({ reportId: 30, pending: true });
    expect(trend.verdict).toBe('worse');
    expect(trend.failingSetKnown).toBe(false);
    expect(trend.newlyFailing).toEqual([]);
    const view = buildTrendView(trend, {
      timezone: 'UTC',
      basePath: '',
      netboxUrl: 'https://netbox.example.com',
      currentFailingKnown: true,
      passed: 7,
      count: 10,
    });
    expect(view.failingSetNote).toBe(
      'Compared on counts only: the failing results of report 30 were not known yet (its mail was still being prepared).',
    );
    expect(view.arrivalText).toBeNull();
  });

  it("marks a report stored after a newer one of its series as late, on its trend and its devices' trends", async () => {
    await record(reportHistoryOf(store), snapshot(40, '2026-03-01T10:00:00Z', { overall: { passed: 1, count: 2 } }, [ntp('a')]));
    await arrive(42, '2026-03-03T10:00:00Z', { total_passed: 2, total_count: 2 });
    const late = await arrive(41, '2026-03-02T10:00:00Z', { total_passed: 0, total_count: 2 });
    const recorded = await recordTrend(reportHistoryOf(store), { ...late, failing: [ntp('a'), ntp('b')] });
    expect(recorded.trend).toMatchObject({ arrivedLate: true, previous: { reportId: 40 } });
    expect(recorded.trend.previous?.pending).toBeUndefined();
    expect(recorded.trend.newlyFailing).toEqual([ntp('b')]);
    expect(buildDevicesTrend(recorded.current, recorded.history, { ...recorded.options, devices: new Set(['b']) })?.arrivedLate).toBe(true);
    const view = buildTrendView(recorded.trend, { timezone: 'UTC', basePath: '', currentFailingKnown: true, passed: 0, count: 2 });
    expect(view.arrivalText).toBe(
      "Arrived late: a newer report of this series was received before it. It is compared with report 40, created before it; the newer report's mail stands as it was sent.",
    );
    // The newer report is not late, and its row is untouched by the late one's.
    const newer = await store.findReport('42@2026-03-03T10:00:00Z');
    expect(newer).toMatchObject({ reportId: 42, pending: true, failing: null });
    expect(newer?.arrivedLate).toBeUndefined();
  });

  it('keeps two series apart and records a retried report once', async () => {
    await record(
      reportHistoryOf(store),
      snapshot(5, '2026-03-01T10:00:00Z', { overall: { passed: 1, count: 2 } }, [ntp('a')], 'https://other.example.com|'),
    );
    const first = snapshot(5, '2026-03-02T10:00:00Z', { overall: { passed: 2, count: 2 } }, []);
    expect((await record(reportHistoryOf(store), first)).previous).toBeNull();
    expect((await record(reportHistoryOf(store), first)).previous).toBeNull();
    const next = await record(reportHistoryOf(store), snapshot(6, '2026-03-03T10:00:00Z', { overall: { passed: 2, count: 2 } }, []));
    expect(next.previous?.reportId).toBe(5);
    expect(next.failingSetChanged).toBe(false);
  });

  it('says when the failing pairs are unknown, and still compares the counts', async () => {
    await record(reportHistoryOf(store), snapshot(1, '2026-03-01T10:00:00Z', { overall: { passed: 1, count: 2 } }, null));
    const same = await record(
      reportHistoryOf(store),
      snapshot(2, '2026-03-02T10:00:00Z', { overall: { passed: 1, count: 2 } }, [ntp('a')]),
    );
    expect(same.failingSetKnown).toBe(false);
    expect(same.failingSetChanged).toBeNull();
    expect(same.newlyFailing).toEqual([]);
    const worse = await record(reportHistoryOf(store), snapshot(3, '2026-03-03T10:00:00Z', { overall: { passed: 0, count: 2 } }, null));
    expect(worse.failingSetChanged).toBe(true);
    expect(worse.regression).toBe(true);
  });

  it('marks a streak longer than the history it looked at as a lower bound', () => {
    const history = [3, 2, 1].map((id) => snapshot(id, `2026-03-0${id}T10:00:00Z`, {}, [ntp('a')]));
    const current = snapshot(4, '2026-03-04T10:00:00Z', {}, [ntp('a')]);
    expect(buildTrend(current, history, { historyTruncated: true }).stillFailing[0]).toMatchObject({
      reports: 4,
      sinceReportId: 1,
      atLeast: true,
    });
    expect(buildTrend(current, history).stillFailing[0]).toMatchObject({ reports: 4, atLeast: false });
  });

  // Issue 17: one line per test with its device count and the first few devices, whatever TREND_LISTED_MAX cuts.
  it('groups newly and still failing pairs per test, HIGH first, with exact device counts beyond the pair cap', () => {
    const pair = (test: string, severity: FailingPair['severity'], device: string): FailingPair => ({ test, severity, device });
    const devices = Array.from({ length: 25 }, (_, i) => `sw-${String(i).padStart(2, '0')}`);
    const before = [pair('ntp', 'LOW', 'sw-00'), pair('ntp', 'LOW', 'sw-01')];
    const now = [...before, ...devices.map((d) => pair('bgp', 'MIDDLE', d)), pair('aaa', 'HIGH', 'sw-09')];
    const trend = buildTrend(snapshot(2, '2026-03-02T10:00:00Z', {}, now), [snapshot(1, '2026-03-01T10:00:00Z', {}, before)]);
    expect(trend.newlyFailing).toHaveLength(26);
    expect(trend.newlyFailingTests).toEqual([
      { test: 'aaa', severity: 'HIGH', devices: ['sw-09'], longestReports: 0, longestSinceReportId: null },
      { test: 'bgp', severity: 'MIDDLE', devices, longestReports: 0, longestSinceReportId: null },
    ]);
    expect(trend.stillFailingTests).toEqual([
      { test: 'ntp', severity: 'LOW', devices: ['sw-00', 'sw-01'], longestReports: 2, longestSinceReportId: 1 },
    ]);
    const view = buildTrendView(trend, { timezone: 'UTC', basePath: '', currentFailingKnown: true, passed: 0, count: 0 });
    expect(view.newlyFailingTests).toEqual([
      { test: 'aaa', severity: 'HIGH', devices: 1, firstDevices: ['sw-09'], moreDevices: 0, sinceText: '' },
      { test: 'bgp', severity: 'MIDDLE', devices: 25, firstDevices: ['sw-00', 'sw-01', 'sw-02'], moreDevices: 22, sinceText: '' },
    ]);
    expect(view.stillFailingTests).toEqual([
      {
        test: 'ntp',
        severity: 'LOW',
        devices: 2,
        firstDevices: ['sw-00', 'sw-01'],
        moreDevices: 0,
        sinceText: 'failing since report 1 (2 reports in a row)',
      },
    ]);
    expect(view.newlyFailing).toHaveLength(20);
    expect(view.moreNewlyFailing).toBe(6);
    expect(view.moreNewlyFailingTests).toBe(0);
  });
});

import path from 'node:path';
import { SqliteStore } from '../src/store';
import { STREAK_HISTORY_MAX, type ReportSnapshot } from '../src/trend';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { recordTrend, reportHistoryOf, saveReport } from '../test/helpers/store-writes';

/**
 * A long-lived series must not make each new report dearer: saving one report (its snapshot, then
 * forgetting the failing sets older than the newest 100) after 20,000 reports of its series should
 * cost about what it costs after 100. Before the partial index of migration 12 it visited every report
 * of the series: ~7.5 ms per report at 50,000, on the event loop.
 */
const LONG_SERIES_RATIO_TARGET = 1.5;

/**
 * The chart's history read (the 11 reports before this one) should not weigh what the reports' failing
 * sets weigh: it plots counts. Reading them whole cost 5.4 ms per mail at 2,000 failing pairs a report.
 */
const WIDE_READ_RATIO_TARGET = 1.5;
const WIDE_FAILING_PAIRS = 2_000;

/**
 * The trend of a report whose failing pairs have all failed for the last 30 reports (its "failing since"
 * walk reads every one of their sets) should cost little more than reading those sets: 137 ms per report
 * at 2,000 pairs (6.9× the read) before the walk kept its counts in typed arrays and stopped spreading objects.
 */
const STREAK_RATIO_TARGET = 2;

function snapshot(series: string, id: number, pairs = 0): ReportSnapshot {
  const createdMs = Date.parse('2026-01-01T00:00:00Z') + id * 60_000;
  return {
    dedupKey: `${series}-${id}`,
    series,
    reportId: id,
    created: new Date(createdMs).toISOString(),
    createdMs,
    counts: {
      overall: { passed: 90, count: 100 },
      HIGH: { passed: 9, count: 10 },
      MIDDLE: { passed: 30, count: 40 },
      LOW: { passed: 51, count: 50 },
    },
    // Every report with a failing set, as with enrichment on: the most the statement can have to forget.
    failing: [
      { device: `sw-${id % 50}`, test: 'ntp_configured', severity: 'HIGH', ids: { result: 1, device: id % 50, test: 41 } },
      { device: `rtr-${id % 7}`, test: 'snmp_v3', severity: 'MIDDLE', ids: { result: 2, device: 300 + (id % 7), test: 42 } },
      ...Array.from({ length: pairs }, (_, i) => ({
        device: `device-${i % 300}.example.net`,
        test: `test_number_${i % 40}`,
        severity: 'LOW' as const,
        ids: { result: 100_000 + i, device: i % 300, test: i % 40 },
      })),
    ],
  };
}

/** Stores `count` reports of a series, many per commit (the store groups a turn's writes). */
async function fill(store: SqliteStore, series: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const batch = Array.from({ length: Math.min(500, count - start) }, (_, i) => saveReport(store, snapshot(series, start + i)));
    await Promise.all(batch);
  }
}

/** CPU per read of the 11 reports before the 13th of `series` (the chart's history, as a mail with the default 12 reads it). */
async function measureHistoryReads(store: SqliteStore, series: string, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await store.listReportsBefore(series, snapshot(series, 12), 11);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

/** CPU per trend (compare, walk back, save) of the reports after the first `after` of `series`, and per plain read of its history. */
async function measureStreaks(store: SqliteStore, series: string, after: number, n: number): Promise<{ trendMs: number; readMs: number }> {
  let trendUs = 0;
  let readUs = 0;
  for (let i = 0; i < n; i++) {
    const current = snapshot(series, after + i, WIDE_FAILING_PAIRS);
    // The floor: the same reports read back (and decoded) one by one, as the walk reads them: the
    // previous one whole, the older ones without their pairs' NetBox ids.
    let readStart = process.cpuUsage();
    let cursor = { createdMs: current.createdMs, reportId: current.reportId };
    for (let k = 0; k < STREAK_HISTORY_MAX; k++) {
      const report = await store.findReportBefore(series, cursor, { failingIds: k === 0 });
      if (!report) break;
      cursor = report;
    }
    let used = process.cpuUsage(readStart);
    readUs += used.user + used.system;
    readStart = process.cpuUsage();
    await recordTrend(reportHistoryOf(store), current);
    used = process.cpuUsage(readStart);
    trendUs += used.user + used.system;
  }
  return { trendMs: trendUs / 1000 / n, readMs: readUs / 1000 / n };
}

/** CPU per report for `n` reports saved one after the other onto `series`, starting at report `from`. */
async function measureSaves(store: SqliteStore, series: string, from: number, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await saveReport(store, snapshot(series, from + i));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

export const reportHistoryBenchmark: Benchmark = {
  id: 'report-history',
  title: 'Report history: saving a report at the end of a long series vs a short one (SQLite, in process)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const long = ctx.quick ? 600 : 20_000;
    const short = 100;
    const saves = ctx.quick ? 20 : 400;
    // NORMAL: no fsync per commit, so the figure is the statements' CPU, not the disk's latency.
    const store = SqliteStore.open({ dataDir: path.join(ctx.tmpDir, 'history'), sqliteSynchronous: 'NORMAL' });
    try {
      await store.migrate();
      await fill(store, 'long', long);
      await fill(store, 'short', short);
      // Alternating rounds, best of two each (noisy machines).
      const longMs: number[] = [];
      const shortMs: number[] = [];
      for (let round = 0; round < 2; round++) {
        shortMs.push(await measureSaves(store, 'short', short + round * saves, saves));
        longMs.push(await measureSaves(store, 'long', long + round * saves, saves));
      }
      // Twelve reports each, one series with 2,000 failing pairs a report, one with 2.
      for (let id = 0; id < 12; id++) await saveReport(store, snapshot('wide', id, WIDE_FAILING_PAIRS));
      await fill(store, 'narrow', 12);
      const reads = ctx.quick ? 10 : 200;
      const wideMs: number[] = [];
      const narrowMs: number[] = [];
      for (let round = 0; round < 2; round++) {
        narrowMs.push(await measureHistoryReads(store, 'narrow', reads));
        wideMs.push(await measureHistoryReads(store, 'wide', reads));
      }
      // A series whose 2,000 failing pairs fail in every report: each trend walks back 30 reports.
      const streakRuns = ctx.quick ? 2 : 10;
      await Promise.all(
        Array.from({ length: STREAK_HISTORY_MAX + 1 }, (_, id) => saveReport(store, snapshot('streak', id, WIDE_FAILING_PAIRS))),
      );
      const streaks = [];
      for (let round = 0; round < 2; round++)
        streaks.push(await measureStreaks(store, 'streak', STREAK_HISTORY_MAX + 1 + round * streakRuns, streakRuns));
      const longBest = Math.min(...longMs);
      const shortBest = Math.min(...shortMs);
      ctx.log(
        `report-history: ${longBest.toFixed(3)} ms CPU per report after ${long} of its series, ${shortBest.toFixed(3)} after ${short}`,
      );
      return [
        {
          name: `save one report, ${long.toLocaleString('en-US')} before it in its series (CPU)`,
          value: longBest,
          unit: 'ms',
          baseline: { name: `the same with ${short} before it`, value: shortBest },
          target: { kind: 'ratio-at-most', ratio: LONG_SERIES_RATIO_TARGET },
          note: `a settleBatch of one report (snapshot + forgetOldFailing), every report with a failing set, ${saves} saves one after the other, synchronous=NORMAL, best of 2 alternating rounds; before migration 12 (partial index on reports that hold a failing set) it grew with the series`,
        },
        {
          name: `read the chart's history, ${WIDE_FAILING_PAIRS.toLocaleString('en-US')} failing pairs a report (CPU)`,
          value: Math.min(...wideMs),
          unit: 'ms',
          baseline: { name: 'the same read, 2 failing pairs a report', value: Math.min(...narrowMs) },
          target: { kind: 'ratio-at-most', ratio: WIDE_READ_RATIO_TARGET },
          note: `SqliteStore.listReportsBefore, the 11 reports before the 12th (the chart's 12 reports), ${reads} reads, best of 2 alternating rounds; before it read counts only, it parsed each report's failing set too: 5.44 ms, 63×`,
        },
        {
          name: `trend of a report, ${WIDE_FAILING_PAIRS.toLocaleString('en-US')} pairs failing for ${STREAK_HISTORY_MAX} reports (CPU)`,
          value: Math.min(...streaks.map((r) => r.trendMs)),
          unit: 'ms',
          baseline: { name: `reading those ${STREAK_HISTORY_MAX} reports, decoded`, value: Math.min(...streaks.map((r) => r.readMs)) },
          target: { kind: 'ratio-at-most', ratio: STREAK_RATIO_TARGET },
          note: `readTrendHistory, buildRecordedTrend and saveReport (walk back while pairs keep failing, compare with the previous report, save), ${streakRuns} reports, best of 2 rounds; the read is findReportBefore ${STREAK_HISTORY_MAX} times, as the walk does it (the previous report whole, the older ones without their pairs' NetBox ids)`,
        },
      ];
    } finally {
      await store.close();
    }
  },
};

import fs from 'node:fs';
import { createBatchHistory } from '../../src/delivery';
import { SqliteStore } from '../../src/store';
import type { ReportCursor, ReportSnapshot } from '../../src/trend';
import { makeReport, makeReportDelivery } from '../contract/store-contract';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { saveReport } from '../helpers/store-writes';

const SERIES = 'https://netbox.example.com|';
const T0 = Date.parse('2026-11-20T08:00:00Z');
const CHART = 11;
const at = (id: number) => T0 + id * 60_000;
const cursorOf = (r: ReportSnapshot): ReportCursor => ({ createdMs: r.createdMs, reportId: r.reportId });
const claimed = (r: ReportSnapshot) => ({ kind: 'report' as const, reportId: r.reportId, reportCreated: r.created, dedupKey: r.dedupKey });
const pair = { device: 'sw1', test: 'ntp-servers', severity: 'HIGH' as const };

/** The real store, counting its history reads. */
function countReads(store: SqliteStore) {
  const reads = { findReportBefore: 0, listReportsBefore: 0, findReport: 0, findReports: 0 };
  return {
    reads,
    store: {
      findReportBefore: (...args: Parameters<SqliteStore['findReportBefore']>) => {
        reads.findReportBefore += 1;
        return store.findReportBefore(...args);
      },
      listReportsBefore: (...args: Parameters<SqliteStore['listReportsBefore']>) => {
        reads.listReportsBefore += 1;
        return store.listReportsBefore(...args);
      },
      findReport: (dedupKey: string) => {
        reads.findReport += 1;
        return store.findReport(dedupKey);
      },
      findReports: (dedupKeys: readonly string[]) => {
        reads.findReports += 1;
        return store.findReports(dedupKeys);
      },
    },
  };
}

/**
 * Composes `batch` as the worker does (each report's previous report, then its chart, then the report
 * saved for the rest of the batch) through a history that starts the batch, and through one that
 * reads the store for every question: both must see the same history.
 */
async function composeBoth(store: SqliteStore, batch: ReportSnapshot[], limit = CHART) {
  const counted = countReads(store);
  const history = createBatchHistory(counted.store);
  const direct = createBatchHistory(store);
  await history.startBatch(batch.map(claimed));
  await direct.startBatch([]);
  const seen: { previous?: number; chart: number[]; arrivedLate?: boolean }[] = [];
  for (const report of batch) {
    const own = await history.findReport(report.dedupKey);
    expect(own).toEqual(await store.findReport(report.dedupKey));
    const previous = await history.findReportBefore(SERIES, cursorOf(report), { failingIds: true });
    expect(previous).toEqual(await direct.findReportBefore(SERIES, cursorOf(report), { failingIds: true }));
    const chart = await history.listReportsBefore(SERIES, cursorOf(report), limit);
    expect(chart).toEqual(await direct.listReportsBefore(SERIES, cursorOf(report), limit));
    seen.push({ previous: previous?.reportId, chart: chart.map((p) => p.reportId), arrivedLate: own?.arrivedLate });
    const composed = { ...report, failing: [pair] };
    await history.saveReport(composed);
    await direct.saveReport(composed);
  }
  return { seen, reads: counted.reads, history };
}

describe('the history a batch of reports compares with', () => {
  let dataDir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dataDir = makeTempDir('batch-history-');
    store = SqliteStore.open({ dataDir });
    // 20 composed reports, then the batch's 5 stored by their webhooks, not composed yet; another series beside them.
    for (let id = 1; id <= 20; id += 1) await saveReport(store, makeReport(id, at(id), [pair]));
    for (let id = 21; id <= 25; id += 1) {
      const data = buildReportData({ id, created: new Date(at(id)).toISOString(), total_passed: id, total_count: 100 });
      await store.insertDelivery({ ...makeReportDelivery(buildBody({ data })), series: SERIES });
    }
    await saveReport(store, makeReport(99, at(22), [pair], 'https://other.example.com|'));
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const batchOf = (ids: number[]) => ids.map((id) => makeReport(id, at(id), null));

  it('is read from the store once for the whole batch, and each report sees what the store alone would show it', async () => {
    const { seen, reads } = await composeBoth(store, batchOf([21, 22, 23, 24, 25]));
    expect(seen.map((s) => s.previous)).toEqual([20, 21, 22, 23, 24]);
    expect(seen[4].chart).toEqual([14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    // The first report's previous one is read whole (its failing set); every chart and later previous report comes from one
    // read, and the batch's own reports (whether each arrived late) from another.
    expect(reads).toEqual({ findReportBefore: 1, listReportsBefore: 1, findReport: 0, findReports: 1 });
  });

  it("tells which of the batch's reports arrived late, from the one read of the batch's own reports", async () => {
    for (const id of [27, 26]) {
      const data = buildReportData({ id, created: new Date(at(id)).toISOString(), total_passed: id, total_count: 100 });
      await store.insertDelivery({ ...makeReportDelivery(buildBody({ data })), series: SERIES });
    }
    const { seen, reads } = await composeBoth(store, batchOf([26, 27]));
    expect(seen.map((s) => s.arrivedLate)).toEqual([true, undefined]);
    expect(reads.findReports).toBe(1);
    expect(reads.findReport).toBe(0);
  });

  it("a stored report between two of the batch, not in it, is the next one's previous report", async () => {
    const { seen, reads } = await composeBoth(store, batchOf([21, 22, 24, 25]));
    expect(seen.map((s) => s.previous)).toEqual([20, 21, 23, 24]);
    expect(seen[2].chart.slice(-2)).toEqual([22, 23]);
    // Report 23 is stored, not composed: its failing set is read from the store.
    expect(reads.findReportBefore).toBe(2);
  });

  it("asks the store again where the batch's read does not reach back far enough, and forgets it at the next batch", async () => {
    const batch = batchOf([21, 22]);
    const { seen, reads, history } = await composeBoth(store, batch, 5);
    expect(seen[1].chart).toEqual([17, 18, 19, 20, 21]);
    expect(reads.listReportsBefore).toBe(1);
    // Fifteen reports before 22: more than the batch read (5 + 2).
    const longer = await history.listReportsBefore(SERIES, { createdMs: at(22), reportId: 22 }, 15);
    expect(longer.map((p) => p.reportId)).toEqual(Array.from({ length: 15 }, (_, i) => i + 7));
    expect(reads.listReportsBefore).toBe(2);
    history.take(batch.map((r) => r.dedupKey));
    // The settle stores report 21 composed; the next batch (22 again, a retry) sees it so, not as its last read had it.
    await saveReport(store, makeReport(21, at(21), [pair]));
    await history.startBatch([claimed(makeReport(22, at(22), null))]);
    const chart = await history.listReportsBefore(SERIES, { createdMs: at(22), reportId: 22 }, 2);
    expect(chart.map((p) => [p.reportId, p.pending ?? false])).toEqual([
      [20, false],
      [21, false],
    ]);
  });
});

import type { DeliveryRecord, Store } from '../store';
import { compareReportOrder, type ReportCursor, type ReportHistory, type ReportPoint, type ReportSnapshot } from '../trend';

export interface BatchHistory extends ReportHistory {
  /** A batch starts: its own reports' rows are read at once (whether each arrived late), a series' history once for all of them. */
  startBatch(deliveries: readonly Pick<DeliveryRecord, 'kind' | 'reportId' | 'reportCreated' | 'dedupKey'>[]): Promise<void>;
  /** The reports composed for these deliveries' keys, to write; forgets them, and the batch's read. */
  take(keys: readonly string[]): ReportSnapshot[];
}

/**
 * The trend's history as one batch's composers see it: a later report of a series compares with the batch's own
 * composed reports until they are written. A series' stored history is read once per batch, the store asked again
 * only where that read does not reach back far enough.
 */
export function createBatchHistory(
  store: Pick<Store, 'findReportBefore' | 'listReportsBefore' | 'findReport' | 'findReports'>,
): BatchHistory {
  const pending = new Map<string, ReportSnapshot>();
  /** Each series' stored reports before the batch's newest, read once for the batch (`complete`: the series holds no older one). */
  let batch: { newest: ReportCursor; size: number; reads: Map<string, { points: ReportPoint[]; complete: boolean }> } | undefined;
  /** The batch's own reports as stored when it started, by dedup key (a key without a row maps to undefined). */
  let own = new Map<string, ReportSnapshot | undefined>();
  const before = (series: string, cursor: ReportCursor) =>
    [...pending.values()].filter((r) => r.series === series && compareReportOrder(r, cursor) < 0);
  /** The newest `limit` stored reports before `cursor` as this batch's read of the series has them; undefined: it cannot tell. */
  const knownBefore = (series: string, cursor: ReportCursor, limit: number): ReportPoint[] | undefined => {
    const read = batch?.reads.get(series);
    if (!read || compareReportOrder(cursor, batch!.newest) > 0) return undefined;
    // The read holds every stored report from its oldest one on: those before `cursor` are the newest ones.
    const known = read.points.filter((p) => compareReportOrder(p, cursor) < 0);
    return known.length >= limit || read.complete ? known.slice(-limit) : undefined;
  };
  return {
    async startBatch(deliveries) {
      const reports = deliveries.filter((d) => d.kind === 'report');
      const cursors = reports.map((d) => ({ createdMs: Date.parse(d.reportCreated), reportId: d.reportId })).sort(compareReportOrder);
      const newest = cursors.at(-1);
      batch = newest && { newest, size: cursors.length, reads: new Map() };
      own = new Map(reports.map((d) => [d.dedupKey, undefined]));
      if (own.size > 0) for (const report of await store.findReports([...own.keys()])) own.set(report.dedupKey, report);
    },
    async findReportBefore(series, cursor, options) {
      const composed = before(series, cursor).sort(compareReportOrder).at(-1);
      // A report composed in this batch that is at least as new as any stored one before `cursor` is the answer.
      const stored = composed && knownBefore(series, cursor, 1);
      if (composed && stored && (stored.length === 0 || compareReportOrder(stored[0], composed) <= 0)) return composed;
      const found = await store.findReportBefore(series, cursor, options);
      return composed && (!found || compareReportOrder(found, composed) <= 0) ? composed : found;
    },
    async listReportsBefore(series, cursor, limit) {
      if (batch && !batch.reads.has(series) && compareReportOrder(cursor, batch.newest) <= 0) {
        const readLimit = limit + batch.size;
        const points = await store.listReportsBefore(series, batch.newest, readLimit);
        batch.reads.set(series, { points, complete: points.length < readLimit });
      }
      const stored = knownBefore(series, cursor, limit) ?? (await store.listReportsBefore(series, cursor, limit));
      const composed = before(series, cursor);
      if (composed.length === 0) return stored;
      const keys = new Set(composed.map((r) => r.dedupKey));
      const points: ReportPoint[] = [...stored.filter((p) => !keys.has(p.dedupKey)), ...composed.map(({ failing: _, ...point }) => point)];
      return points.sort(compareReportOrder).slice(-limit);
    },
    async saveReport(snapshot) {
      pending.set(snapshot.dedupKey, snapshot);
    },
    findReport: async (dedupKey) => (own.has(dedupKey) ? own.get(dedupKey) : store.findReport(dedupKey)),
    take(keys) {
      // Only the batch's own: another source's batch may still be composing beside it.
      const taken = keys.flatMap((key) => pending.get(key) ?? []);
      for (const key of keys) pending.delete(key);
      // The batch is composed: its reads are not kept for anything after it (a batch beside it reads the store).
      batch = undefined;
      own = new Map();
      return taken;
    },
  };
}

import { NetboxError, type NetboxClient, type RequestBudget } from '../netbox';
import type { ReportCursor } from '../trend';

/** validity's reports list: no filterset, newest first by its model's ordering; NetBox's `?ordering=` applies. */
export const REPORTS_PATH = '/api/plugins/validity/reports/';

/** A report as the list names it: enough to place it in NetBox's order and fetch it. */
export interface ListedReport {
  id: number;
  /** As NetBox serializes it: with the id, the report's dedup key. */
  created: string;
  createdMs: number;
}

/** Whether a report comes after a place in NetBox's order (creation time, then id). */
function isAfter(report: ReportCursor, cursor: ReportCursor): boolean {
  return report.createdMs > cursor.createdMs || (report.createdMs === cursor.createdMs && report.reportId > cursor.reportId);
}

/** The place of a listed report in NetBox's order. */
export function toCursor(report: ListedReport): ReportCursor {
  return { createdMs: report.createdMs, reportId: report.id };
}

/**
 * Lists NetBox's reports newest first, page after page, until one at or before `after` (so a relay that
 * missed nothing reads one page); `after` null: the first page only, for its newest report. Resolves
 * with the reports after `after`, oldest first, and the newest report NetBox has.
 */
export async function listNewerReports(
  client: NetboxClient,
  after: ReportCursor | null,
  budget: RequestBudget,
): Promise<{ newer: ListedReport[]; newest: ListedReport | undefined }> {
  const newer: ListedReport[] = [];
  let newest: ListedReport | undefined;
  await client.streamList(
    `${REPORTS_PATH}?ordering=-created`,
    (results) => {
      let reachedSeen = after === null;
      for (const item of results) {
        const report = parseListedReport(item);
        if (!newest || isAfter(toCursor(report), toCursor(newest))) newest = report;
        if (after && isAfter(toCursor(report), after)) newer.push(report);
        else reachedSeen = true;
      }
      return !reachedSeen;
    },
    budget,
  );
  return { newer: newer.sort((a, b) => (isAfter(toCursor(a), toCursor(b)) ? 1 : -1)), newest };
}

/** One entry of the list; anything without an id and a creation time is not validity's list. */
function parseListedReport(item: Record<string, unknown>): ListedReport {
  const { id, created } = item;
  const createdMs = typeof created === 'string' ? Date.parse(created) : Number.NaN;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || typeof created !== 'string' || Number.isNaN(createdMs))
    throw new NetboxError('PROTOCOL', `NetBox's reports list holds an entry without an id and a creation time (${REPORTS_PATH})`);
  return { id, created, createdMs };
}

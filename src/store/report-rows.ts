import type { FailingPair, ReportSnapshot } from '../trend';

/** A `reports` row as both stores read it (PostgreSQL returns the same column names). */
export interface ReportRow {
  dedup_key: string;
  series: string;
  report_id: number;
  report_created: string;
  created_ms: number;
  total_passed: number;
  total_count: number;
  high_passed: number;
  high_count: number;
  middle_passed: number;
  middle_count: number;
  low_passed: number;
  low_count: number;
  failing: string | null;
}

/** The parameters of a `reports` row: the snapshot's counts, its failing pairs encoded. */
export type ReportParams = ReportSnapshot['counts'] & {
  dedupKey: string;
  series: string;
  reportId: number;
  created: string;
  createdMs: number;
  failing: string | null;
  failingCount: number | null;
};

/** A snapshot as the parameters of its row. */
export function toReportParams(snapshot: ReportSnapshot): ReportParams {
  const { dedupKey, series, reportId, created, createdMs, counts, failing } = snapshot;
  return {
    ...counts,
    dedupKey,
    series,
    reportId,
    created,
    createdMs,
    failing: encodeFailingPairs(failing),
    failingCount: failing?.length ?? null,
  };
}

const SEVERITIES = new Set(['HIGH', 'MIDDLE', 'LOW']);

/** Failing pairs as compact JSON (`[[device, test, severity], ...]`); null stays null (unknown). */
export function encodeFailingPairs(pairs: readonly FailingPair[] | null): string | null {
  return pairs === null ? null : JSON.stringify(pairs.map((p) => [p.device, p.test, p.severity]));
}

/** The inverse of {@link encodeFailingPairs}; a row that does not decode counts as unknown. */
export function decodeFailingPairs(value: string | null): FailingPair[] | null {
  if (value === null) return null;
  try {
    const rows = JSON.parse(value) as unknown;
    if (!Array.isArray(rows)) return null;
    return (rows as unknown[])
      .filter(
        (r): r is [string, string, FailingPair['severity']] =>
          Array.isArray(r) && typeof r[0] === 'string' && typeof r[1] === 'string' && SEVERITIES.has(r[2] as string),
      )
      .map(([device, test, severity]) => ({ device, test, severity }));
  } catch {
    return null;
  }
}

/** A `reports` row (either store) as the trend's snapshot. */
export function decodeReportRow(row: ReportRow): ReportSnapshot {
  return {
    dedupKey: row.dedup_key,
    series: row.series,
    reportId: row.report_id,
    created: row.report_created,
    createdMs: row.created_ms,
    counts: {
      totalPassed: row.total_passed,
      totalCount: row.total_count,
      highPassed: row.high_passed,
      highCount: row.high_count,
      middlePassed: row.middle_passed,
      middleCount: row.middle_count,
      lowPassed: row.low_passed,
      lowCount: row.low_count,
    },
    failing: decodeFailingPairs(row.failing),
  };
}

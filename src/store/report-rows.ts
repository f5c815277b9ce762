import { COUNT_FIELDS, readCounts, SEVERITIES, writeCounts } from '../report';
import { hasIds, type FailingPair, type PairStates, type ReportPoint, type ReportSnapshot } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { ValuesCell } from './statement';
import type { NewDelivery } from './types';

/** A report's arrival columns and their types (VALUES rows are untyped); a row binds its parameters under these names. */
export const ARRIVAL_COLUMNS = [
  ['dedup_key', 'TEXT'],
  ['series', 'TEXT'],
  ['report_id', 'BIGINT'],
  ['report_created', 'TEXT'],
  ['created_ms', 'BIGINT'],
  ...COUNT_FIELDS.map((field) => [field, 'INTEGER'] as const),
] as const satisfies readonly ValuesCell[];

export type ReportPointRow = { [C in (typeof ARRIVAL_COLUMNS)[number] as C[0]]: C[1] extends 'TEXT' ? string : number } & {
  /** 0 while the report's mail is not composed yet (its row written with its webhook); absent before migration 15. */
  composed?: number;
  arrived_late?: number;
};

export interface ReportRow extends ReportPointRow {
  failing: string | null;
  /** JSON `[[resultId, deviceId, testId], ...]`, one per failing pair; NULL when any pair came without ids. */
  failing_ids: string | null;
  failing_count?: number | null;
  /** JSON of the report's PairStates (see encodePairStates); absent from reads that leave it out. */
  pair_states?: string | null;
}

/** Without its failing set: what the chart's history read selects. */
export const REPORT_POINT_COLUMNS = `${ARRIVAL_COLUMNS.map(([column]) => column).join(', ')}, composed, arrived_late`;

export const REPORT_COLUMNS = [...ARRIVAL_COLUMNS.map(([column]) => column), 'failing', 'failing_ids', 'failing_count', 'pair_states'];

/** Whether a new delivery comes with its report's row (a report, and the series it belongs to). */
export function hasArrival(delivery: NewDelivery): delivery is NewDelivery & ReportDelivery & { series: string } {
  return Boolean(delivery.report && delivery.series);
}

export function toReportRow(snapshot: ReportSnapshot): ReportRow {
  const { failing, states } = snapshot;
  return {
    ...writeCounts(snapshot.counts),
    dedup_key: snapshot.dedupKey,
    series: snapshot.series,
    report_id: snapshot.reportId,
    report_created: snapshot.created,
    created_ms: snapshot.createdMs,
    failing: failing ? JSON.stringify(failing.map((p) => [p.device, p.test, p.severity])) : null,
    // Kept apart from the names (a search of the names never matches an id); null unless every pair has them.
    failing_ids: failing?.every(hasIds) ? JSON.stringify(failing.map((p) => [p.ids.result, p.ids.device, p.ids.test])) : null,
    failing_count: failing?.length ?? null,
    pair_states: encodePairStates(states ?? null),
  };
}

/** Its maps as `[key, hasResult]` entries. */
function encodePairStates(states: PairStates | null): string | null {
  if (!states) return null;
  return JSON.stringify({
    now: states.now && [...states.now],
    before: states.before && [...states.before],
    deletedTests: states.deletedTests,
    deletedDevices: states.deletedDevices,
    unknownReason: states.unknownReason,
  });
}

/** A value that does not decode counts as not asked (null). */
function decodePairStates(value: string | null | undefined): PairStates | null {
  if (!value) return null;
  try {
    const raw = JSON.parse(value) as Record<string, unknown>;
    const map = (v: unknown) =>
      Array.isArray(v)
        ? new Map(v.filter((e): e is [string, boolean] => Array.isArray(e) && typeof e[0] === 'string').map(([k, b]) => [k, b === true]))
        : null;
    const names = (v: unknown) => (Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : []);
    return {
      now: map(raw.now),
      before: map(raw.before),
      deletedTests: names(raw.deletedTests),
      deletedDevices: names(raw.deletedDevices),
      unknownReason: typeof raw.unknownReason === 'string' ? raw.unknownReason : null,
    };
  } catch {
    return null;
  }
}

const SEVERITY_NAMES: ReadonlySet<string> = new Set(SEVERITIES);

/** Only when the ids decode and match the pairs one for one. */
function attachFailingIds(pairs: FailingPair[] | null, value: string | null): FailingPair[] | null {
  if (pairs === null || value === null) return pairs;
  try {
    const ids = JSON.parse(value) as unknown;
    if (!Array.isArray(ids) || ids.length !== pairs.length) return pairs;
    const id = (v: unknown) => (typeof v === 'number' ? v : null);
    return pairs.map((pair, i) => {
      const [result, device, test] = (Array.isArray(ids[i]) ? ids[i] : []) as unknown[];
      // Written out, not spread: a trend walks up to 30 sets of thousands of pairs, and spread objects read slower.
      return typeof result === 'number'
        ? { device: pair.device, test: pair.test, severity: pair.severity, ids: { result, device: id(device), test: id(test) } }
        : pair;
    });
  } catch {
    return pairs;
  }
}

/** `[[device, test, severity], ...]`; a row that does not decode counts as unknown. */
function decodeFailingPairs(value: string | null): FailingPair[] | null {
  if (value === null) return null;
  try {
    const rows = JSON.parse(value) as unknown;
    if (!Array.isArray(rows)) return null;
    // One pass, no intermediate array: a trend decodes up to 30 of these sets per report.
    const pairs: FailingPair[] = [];
    for (const r of rows as unknown[]) {
      if (Array.isArray(r) && typeof r[0] === 'string' && typeof r[1] === 'string' && SEVERITY_NAMES.has(r[2] as string)) {
        pairs.push({ device: r[0], test: r[1], severity: r[2] as FailingPair['severity'] });
      }
    }
    return pairs;
  } catch {
    return null;
  }
}

export function decodeReportRow(row: ReportRow): ReportSnapshot {
  const snapshot: ReportSnapshot = {
    ...decodeReportPointRow(row),
    failing: attachFailingIds(decodeFailingPairs(row.failing), row.failing_ids ?? null),
  };
  const states = decodePairStates(row.pair_states);
  if (states) snapshot.states = states;
  return snapshot;
}

export function decodeReportPointRow(row: ReportPointRow): ReportPoint {
  return {
    dedupKey: row.dedup_key,
    series: row.series,
    reportId: row.report_id,
    created: row.report_created,
    createdMs: row.created_ms,
    counts: readCounts(row),
    ...(Number(row.composed ?? 1) === 0 ? { pending: true } : {}),
    ...(Number(row.arrived_late ?? 0) === 1 ? { arrivedLate: true } : {}),
  };
}

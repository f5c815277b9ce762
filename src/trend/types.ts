import type { ReportCounts, Severity } from '../report';

/** One failing (device, test) pair of a report, identified by names as the mail shows them: validity's result ids change every run. */
export interface FailingPair {
  device: string;
  test: string;
  severity: Severity;
  /** NetBox's ids, kept so the mail's links can be rendered again from the store (preview); never used to compare reports. */
  ids?: { result: number; device: number | null; test: number | null };
}

/** A failing pair with its NetBox ids, as enrichment reads it from NetBox's results (the mail, the CSV, the routes read it). */
export type FailingResult = FailingPair & { ids: NonNullable<FailingPair['ids']> };

/** A pair kept before the ids were stored has none. */
export function hasIds(pair: FailingPair): pair is FailingResult {
  return pair.ids !== undefined;
}

/**
 * What NetBox says of the pairs whose failing changed: a pair gone from a failing set passed or was not evaluated, and only
 * a `passed: true` result tells which. A side is null when NetBox could not tell.
 */
export interface PairStates {
  /** By pairKey, each pair that failed before and does not now: whether this report has a result for it (so it passed); absent: unknown. */
  now: ReadonlyMap<string, boolean> | null;
  /** The same for the pairs failing in this report that did not fail in the previous one, in the previous report. */
  before: ReadonlyMap<string, boolean> | null;
  /** The asked tests and devices NetBox no longer has (deleted since, with their results). */
  deletedTests: readonly string[];
  deletedDevices: readonly string[];
  /** Why some pairs' states are not known, for the mail; null when NetBox answered for every pair asked. */
  unknownReason: string | null;
}

/** No pair's state known, and nothing to say why: the previous report's failing pairs are unknown, so none was asked. */
export const NO_PAIR_STATES: PairStates = { now: null, before: null, deletedTests: [], deletedDevices: [], unknownReason: null };

/** What the relay remembers of one report, for the trend: its counts, and its failing pairs when NetBox answered (else null). */
export interface ReportSnapshot {
  /** `<id>@<created>`: unique across NetBox instances. */
  dedupKey: string;
  /** See buildSourceSeriesKey. */
  series: string;
  reportId: number;
  /** As NetBox sent it; reports are ordered by it (`createdMs`), then by report id. */
  created: string;
  createdMs: number;
  counts: ReportCounts;
  failing: FailingPair[] | null;
  /** Stored with its webhook, its mail not composed yet (so `failing` is null); absent once composed. */
  pending?: boolean;
  /** A newer report of its series had been stored when it arrived (a late webhook, or one fetched late). */
  arrivedLate?: boolean;
  /** What NetBox said of the changed pairs when this report was compared, kept so its preview says the same; absent or null: not asked. */
  states?: PairStates | null;
}

/** A stored report without its failing set (what a report row weighs): what the mail's chart plots. */
export type ReportPoint = Omit<ReportSnapshot, 'failing'>;

/** A place in a series: before the report created at `createdMs` (ties broken by report id). */
export type ReportCursor = Pick<ReportSnapshot, 'createdMs' | 'reportId'>;

/** NetBox's order of reports: negative when `a` comes first. */
export function compareReportOrder(a: ReportCursor, b: ReportCursor): number {
  return a.createdMs - b.createdMs || a.reportId - b.reportId;
}

export interface ReportReadOptions {
  /** False: the failing pairs come without their NetBox ids (default true), a fifth of a large set's bytes. */
  failingIds?: boolean;
}

/** validity's severities, highest first. */
export const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** HIGH first: the order every list of tests, pairs and waivers sorts by. */
export const SEVERITY_ORDER: Record<Severity, number> = { HIGH: 0, MIDDLE: 1, LOW: 2 };

/** How many of these (failing pairs or results) there are per severity. */
export function countPerSeverity(items: readonly { severity: Severity }[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { HIGH: 0, MIDDLE: 0, LOW: 0 };
  for (const item of items) counts[item.severity] += 1;
  return counts;
}

/** Results that passed, of those counted. */
export interface PassCount {
  passed: number;
  count: number;
}

/** Passed and counted results per severity, as the webhook's counts are: a report's, or some of its devices'. */
export type SeverityCounts = Record<Severity, PassCount>;

/** A report's counts (validity's `*_passed` / `*_count`): overall and per severity, the one shape past the webhook's schema. */
export type ReportCounts = SeverityCounts & { overall: PassCount };

/** Each line of a report's counts, overall first. */
export const COUNT_LINES = ['overall', ...SEVERITIES] as const;

/** One value per line of a report's counts (overall, HIGH, MIDDLE, LOW). */
export function mapCountLines<T>(value: (line: (typeof COUNT_LINES)[number]) => T): Record<(typeof COUNT_LINES)[number], T> {
  return { overall: value('overall'), HIGH: value('HIGH'), MIDDLE: value('MIDDLE'), LOW: value('LOW') };
}

/** validity's name of each line of the counts (`total_passed`, `high_count`, …): the webhook's fields and the stores' columns. */
const FIELD_PREFIX = { overall: 'total', HIGH: 'high', MIDDLE: 'middle', LOW: 'low' } as const;

export type CountField = `${(typeof FIELD_PREFIX)[keyof typeof FIELD_PREFIX]}_${keyof PassCount}`;

/** Every count field, in validity's order of lines (total, high, middle, low), passed before count. */
export const COUNT_FIELDS: readonly CountField[] = COUNT_LINES.flatMap((line) => [
  `${FIELD_PREFIX[line]}_passed` as const,
  `${FIELD_PREFIX[line]}_count` as const,
]);

/** The counts from validity's fields (the webhook's `data`, a stored row); a missing one reads 0. */
export function readCounts(fields: Readonly<Partial<Record<CountField, number | null>>>): ReportCounts {
  return mapCountLines((line) => ({
    passed: fields[`${FIELD_PREFIX[line]}_passed`] ?? 0,
    count: fields[`${FIELD_PREFIX[line]}_count`] ?? 0,
  }));
}

/** The counts as validity's fields, for a row's columns. */
export function writeCounts(counts: ReportCounts): Record<CountField, number> {
  return Object.fromEntries(
    COUNT_LINES.flatMap((line) => [
      [`${FIELD_PREFIX[line]}_passed`, counts[line].passed],
      [`${FIELD_PREFIX[line]}_count`, counts[line].count],
    ]),
  ) as Record<CountField, number>;
}

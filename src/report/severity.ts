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

/** Passed and counted results per severity, as the webhook's counts are: a report's, or some of its devices'. */
export type SeverityCounts = Record<Severity, { passed: number; count: number }>;

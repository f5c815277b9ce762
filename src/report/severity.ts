/** validity's severities, highest first. */
export const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Passed and counted results per severity, as the webhook's counts are: a report's, or some of its devices'. */
export type SeverityCounts = Record<Severity, { passed: number; count: number }>;

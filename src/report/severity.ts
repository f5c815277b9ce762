/** validity's severities, highest first. */
export const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;
export type Severity = (typeof SEVERITIES)[number];

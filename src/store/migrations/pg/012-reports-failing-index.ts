/**
 * PostgreSQL migration 012 (mirrors SQLite migration 12): the reports of a series that still hold a
 * failing set, indexed on their own. Saving a report forgets the failing sets older than the newest
 * 100 of its series (`forgetOldFailing`); without this index that statement visited every report the
 * series ever had, so a series of 50,000 reports cost ~7.5 ms per report (SQLite, on the event loop)
 * and grew with its age. With it, at most ~101 rows are looked at.
 */
export const MIGRATION_012_REPORTS_FAILING_INDEX = {
  version: 12,
  name: 'reports_failing_index',
  sql: `
    CREATE INDEX reports_series_failing ON reports (series, created_ms, report_id) WHERE failing IS NOT NULL;
  `,
} as const;

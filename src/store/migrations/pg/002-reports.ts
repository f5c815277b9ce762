/** PostgreSQL migration 002: one row per report for the trend (mirrors SQLite migration 2). */
export const MIGRATION_002_REPORTS = {
  version: 2,
  name: 'reports',
  // failing: JSON [[device, test, severity], ...] as text (both engines decode the same string); NULL = unknown.
  sql: `
    CREATE TABLE reports (
      dedup_key       TEXT    PRIMARY KEY,
      series          TEXT    NOT NULL,
      report_id       BIGINT  NOT NULL,
      report_created  TEXT    NOT NULL,
      created_ms      BIGINT  NOT NULL,
      total_passed    INTEGER NOT NULL,
      total_count     INTEGER NOT NULL,
      high_passed     INTEGER NOT NULL,
      high_count      INTEGER NOT NULL,
      middle_passed   INTEGER NOT NULL,
      middle_count    INTEGER NOT NULL,
      low_passed      INTEGER NOT NULL,
      low_count       INTEGER NOT NULL,
      failing         TEXT,
      failing_count   INTEGER
    );
    CREATE INDEX reports_series_created ON reports (series, created_ms, report_id);
  `,
} as const;

/**
 * PostgreSQL migration 006 (mirrors SQLite migration 6) "parse once": the report as the
 * webhook parsed it, so the worker and the dashboard read typed columns instead of re-parsing each
 * body. NULL in rows stored before (and in the watchdog's own records): readers fall back on the
 * body there. Counts are BIGINT because the schema accepts up to 2^53 − 1. custom_fields is JSON
 * text, not JSONB: it is only ever read back whole, and text keeps SQLite and PostgreSQL alike.
 * Nullable columns without a default are a catalogue change only: no table rewrite, a brief lock.
 */
export const MIGRATION_006_DELIVERY_REPORT_FIELDS = {
  version: 6,
  name: 'delivery_report_fields',
  sql: `
    ALTER TABLE deliveries
      ADD COLUMN display        TEXT,
      ADD COLUMN url            TEXT,
      ADD COLUMN results_url    TEXT,
      ADD COLUMN device_count   BIGINT,
      ADD COLUMN test_count     BIGINT,
      ADD COLUMN total_passed   BIGINT,
      ADD COLUMN total_count    BIGINT,
      ADD COLUMN high_passed    BIGINT,
      ADD COLUMN high_count     BIGINT,
      ADD COLUMN middle_passed  BIGINT,
      ADD COLUMN middle_count   BIGINT,
      ADD COLUMN low_passed     BIGINT,
      ADD COLUMN low_count      BIGINT,
      ADD COLUMN custom_fields  TEXT,
      ADD COLUMN triggered_by   TEXT;
  `,
} as const;

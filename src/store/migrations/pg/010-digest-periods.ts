/**
 * PostgreSQL migration 010 (mirrors SQLite migration 10): one row per period of a digest
 * route, keyed by route + period start, written in the transaction that queues the period's mail.
 */
export const MIGRATION_010_DIGEST_PERIODS = {
  version: 10,
  name: 'digest_periods',
  sql: `
    CREATE TABLE digest_periods (
      route         TEXT    NOT NULL,
      period_start  BIGINT  NOT NULL,
      period_end    BIGINT  NOT NULL,
      delivery_id   BIGINT,
      late          INTEGER NOT NULL,
      queued_at     BIGINT  NOT NULL,
      PRIMARY KEY (route, period_start),
      UNIQUE (route, period_end)
    );
  `,
} as const;

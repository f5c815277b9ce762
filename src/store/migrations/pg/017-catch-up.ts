/**
 * PostgreSQL migration 017 (mirrors SQLite migration 17): how a delivery reached the relay (its webhook,
 * or fetched from NetBox by the catch-up), and per NetBox source the newest report seen (kept apart from
 * the deliveries, which retention prunes) with the lease that lets one relay at a time catch up.
 */
export const MIGRATION_017_CATCH_UP = {
  version: 17,
  name: 'catch_up',
  sql: `
    ALTER TABLE deliveries ADD COLUMN received_via TEXT NOT NULL DEFAULT 'webhook';
    CREATE TABLE catch_up_sources (
      source           TEXT    PRIMARY KEY,
      seen_created_ms  BIGINT,
      seen_report_id   BIGINT,
      lease_owner      TEXT,
      lease_until      BIGINT  NOT NULL DEFAULT 0,
      succeeded_at     BIGINT
    );
  `,
} as const;

/**
 * PostgreSQL migration 014 (mirrors SQLite migration 14): what a delivery is (report, digest, watchdog)
 * chooses its composer; rows stored before said it by their dedup key.
 */
export const MIGRATION_014_DELIVERY_KIND = {
  version: 14,
  name: 'delivery_kind',
  sql: `
    ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'report';
    UPDATE deliveries SET kind = 'digest' WHERE dedup_key LIKE 'digest:%';
    UPDATE deliveries SET kind = 'watchdog' WHERE dedup_key LIKE 'watchdog:%';
  `,
} as const;

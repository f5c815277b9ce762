/**
 * PostgreSQL migration 008 (mirrors SQLite migration 8): the dashboard's filters. A report
 * id and a date range are answered from an index, newest first by id (keyset paging), however many
 * sent rows pile up. A filter by state already has `deliveries_state (state, id)` (migration 001).
 * And NetBox's ids of each failing result (`reports.failing_ids`, parallel to `failing`), so that
 * `preview --id` renders the failing-tests section of a sent mail from the store.
 */
export const MIGRATION_008_DELIVERY_LIST_INDEXES = {
  version: 8,
  name: 'delivery_list_indexes',
  sql: `
    CREATE INDEX deliveries_report ON deliveries (report_id, id);
    CREATE INDEX deliveries_received ON deliveries (received_at);
    ALTER TABLE reports ADD COLUMN failing_ids TEXT;
  `,
} as const;

/**
 * PostgreSQL migration 016 (mirrors SQLite migration 16): what NetBox's results said of the pairs that
 * changed since the previous report (passed, or not evaluated), kept with the report so that `preview
 * --id` words its mail as it was sent.
 */
export const MIGRATION_016_REPORT_PAIR_STATES = {
  version: 16,
  name: 'report_pair_states',
  sql: `
    ALTER TABLE reports ADD COLUMN pair_states TEXT;
  `,
} as const;

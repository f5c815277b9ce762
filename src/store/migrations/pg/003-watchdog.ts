/** PostgreSQL migration 003: the watchdog's shared state (mirrors SQLite migration 3). */
export const MIGRATION_003_WATCHDOG = {
  version: 3,
  name: 'watchdog_state',
  // One row; `version` is the compare-and-set token, so of several replicas one sends each mail.
  sql: `
    CREATE TABLE watchdog_state (
      id          INTEGER PRIMARY KEY CHECK (id = 1),
      state       TEXT    NOT NULL CHECK (state IN ('ok', 'overdue')),
      since       BIGINT,
      created_at  BIGINT  NOT NULL,
      changed_at  BIGINT  NOT NULL,
      version     INTEGER NOT NULL
    );
  `,
} as const;

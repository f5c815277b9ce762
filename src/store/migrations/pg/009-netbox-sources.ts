/**
 * PostgreSQL migration 009 (mirrors SQLite migration 9): the NetBox source that posted each
 * delivery, every row stored before belonging to the default source (a constant default is a catalogue
 * change only, PostgreSQL ≥ 11: no table rewrite, a brief lock); and the watchdog's state per source,
 * the single row of migration 3 becoming the default source's.
 */
export const MIGRATION_009_NETBOX_SOURCES = {
  version: 9,
  name: 'netbox_sources',
  sql: `
    ALTER TABLE deliveries ADD COLUMN netbox_source TEXT NOT NULL DEFAULT 'default';
    CREATE TABLE watchdog_states (
      source      TEXT    PRIMARY KEY,
      state       TEXT    NOT NULL CHECK (state IN ('ok', 'overdue')),
      since       BIGINT,
      created_at  BIGINT  NOT NULL,
      changed_at  BIGINT  NOT NULL,
      version     INTEGER NOT NULL
    );
    INSERT INTO watchdog_states (source, state, since, created_at, changed_at, version)
      SELECT 'default', state, since, created_at, changed_at, version FROM watchdog_state;
  `,
} as const;

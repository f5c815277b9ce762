/**
 * PostgreSQL migration 005: one row per (delivery, route), the routing decision taken once and the
 * state of that route's mail (mirrors SQLite migration 5), so a retry, a restart or another replica
 * sends only the routes not yet sent.
 */
export const MIGRATION_005_ROUTE_MAILS = {
  version: 5,
  name: 'route_mails',
  sql: `
    CREATE TABLE route_mails (
      delivery_id      BIGINT  NOT NULL,
      route            TEXT    NOT NULL,
      position         INTEGER NOT NULL,
      outcome          TEXT    NOT NULL CHECK (outcome IN ('send', 'suppressed', 'skipped')),
      reason           TEXT    NOT NULL,
      reminder         BOOLEAN NOT NULL DEFAULT FALSE,
      state            TEXT    NOT NULL CHECK (state IN ('pending', 'sent', 'failed', 'suppressed', 'skipped')),
      message_id       TEXT,
      response         TEXT,
      last_error       TEXT,
      last_error_code  TEXT,
      sent_at          BIGINT,
      decided_at       BIGINT  NOT NULL,
      updated_at       BIGINT  NOT NULL,
      PRIMARY KEY (delivery_id, route)
    );
    CREATE INDEX route_mails_route ON route_mails (route, outcome);
  `,
} as const;

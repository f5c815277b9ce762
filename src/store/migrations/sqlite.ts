import { buildCommonMigrations, type Migration } from './common';

/**
 * SQLite schema migrations, applied in order at open; `PRAGMA user_version` records the last one.
 * Append new entries; never edit one that has shipped.
 */
const COMMON = buildCommonMigrations('INTEGER');

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'deliveries',
    sql: `
      CREATE TABLE deliveries (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        dedup_key        TEXT    NOT NULL UNIQUE,
        report_id        INTEGER NOT NULL,
        report_created   TEXT    NOT NULL,
        completed_at     TEXT    NOT NULL,
        source           TEXT    NOT NULL,
        body             BLOB    NOT NULL,
        received_at      INTEGER NOT NULL,
        state            TEXT    NOT NULL DEFAULT 'queued',
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at  INTEGER,
        lease_owner      TEXT,
        lease_until      INTEGER,
        last_error       TEXT,
        last_error_code  TEXT,
        message_id       TEXT,
        sent_at          INTEGER,
        updated_at       INTEGER NOT NULL
      );
      CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at, id);
      CREATE TABLE health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL);
    `,
  },
  COMMON[2],
  {
    version: 3,
    name: 'watchdog_state',
    // One row: whether reports are overdue, with a version for compare-and-set between replicas.
    sql: `
      CREATE TABLE watchdog_state (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        state       TEXT    NOT NULL,
        since       INTEGER,
        created_at  INTEGER NOT NULL,
        changed_at  INTEGER NOT NULL,
        version     INTEGER NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'sent_messages',
    // The mail as it was sent per delivery, for the dashboard (the latest send of a delivery).
    sql: `
      CREATE TABLE sent_messages (
        delivery_id    INTEGER PRIMARY KEY,
        raw            BLOB    NOT NULL,
        envelope_from  TEXT    NOT NULL,
        envelope_to    TEXT    NOT NULL,
        subject        TEXT    NOT NULL,
        text_part      TEXT,
        html_part      TEXT,
        response       TEXT    NOT NULL,
        sent_at        INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'route_mails',
    // One row per (delivery, route): the routing decision, taken once, and the state of that route's mail,
    // so a retry or a restart sends only the routes not yet sent.
    sql: `
      CREATE TABLE route_mails (
        delivery_id      INTEGER NOT NULL,
        route            TEXT    NOT NULL,
        position         INTEGER NOT NULL,
        outcome          TEXT    NOT NULL,
        reason           TEXT    NOT NULL,
        reminder         INTEGER NOT NULL DEFAULT 0,
        state            TEXT    NOT NULL,
        message_id       TEXT,
        response         TEXT,
        last_error       TEXT,
        last_error_code  TEXT,
        sent_at          INTEGER,
        decided_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        PRIMARY KEY (delivery_id, route)
      );
      CREATE INDEX route_mails_route ON route_mails (route, outcome);
    `,
  },
  {
    version: 6,
    name: 'delivery_report_fields',
    // "parse once": the report as the webhook parsed it, so the worker and the dashboard read
    // typed columns instead of re-parsing each body. NULL in rows stored before (and in the watchdog's
    // own records): readers fall back on the body there. custom_fields is JSON text (a free-form object).
    // ADD COLUMN without a default only rewrites the schema, not the rows.
    sql: `
      ALTER TABLE deliveries ADD COLUMN display       TEXT;
      ALTER TABLE deliveries ADD COLUMN url           TEXT;
      ALTER TABLE deliveries ADD COLUMN results_url   TEXT;
      ALTER TABLE deliveries ADD COLUMN device_count  INTEGER;
      ALTER TABLE deliveries ADD COLUMN test_count    INTEGER;
      ALTER TABLE deliveries ADD COLUMN total_passed  INTEGER;
      ALTER TABLE deliveries ADD COLUMN total_count   INTEGER;
      ALTER TABLE deliveries ADD COLUMN high_passed   INTEGER;
      ALTER TABLE deliveries ADD COLUMN high_count    INTEGER;
      ALTER TABLE deliveries ADD COLUMN middle_passed INTEGER;
      ALTER TABLE deliveries ADD COLUMN middle_count  INTEGER;
      ALTER TABLE deliveries ADD COLUMN low_passed    INTEGER;
      ALTER TABLE deliveries ADD COLUMN low_count     INTEGER;
      ALTER TABLE deliveries ADD COLUMN custom_fields TEXT;
      ALTER TABLE deliveries ADD COLUMN triggered_by  TEXT;
    `,
  },
  {
    version: 7,
    name: 'sent_messages_per_route',
    // One kept copy per (delivery, route), so a report mailed to two routes keeps both mails.
    // SQLite cannot change a primary key in place: the table is rebuilt in this migration's transaction.
    // A copy kept before names its route only when exactly one route of its delivery was sent (then it
    // is that route's mail, with that Message-ID); otherwise its route is '' ("not recorded").
    sql: `
      CREATE TABLE sent_messages_by_route (
        delivery_id    INTEGER NOT NULL,
        route          TEXT    NOT NULL,
        message_id     TEXT,
        raw            BLOB    NOT NULL,
        envelope_from  TEXT    NOT NULL,
        envelope_to    TEXT    NOT NULL,
        subject        TEXT    NOT NULL,
        text_part      TEXT,
        html_part      TEXT,
        response       TEXT    NOT NULL,
        sent_at        INTEGER NOT NULL,
        PRIMARY KEY (delivery_id, route)
      );
      INSERT INTO sent_messages_by_route
        SELECT s.delivery_id, COALESCE(sole.route, ''), sole.message_id, s.raw, s.envelope_from, s.envelope_to, s.subject,
               s.text_part, s.html_part, s.response, s.sent_at
        FROM sent_messages s LEFT JOIN (
          SELECT delivery_id, MAX(route) AS route, MAX(message_id) AS message_id FROM route_mails
          WHERE state = 'sent' GROUP BY delivery_id HAVING COUNT(*) = 1
        ) sole ON sole.delivery_id = s.delivery_id;
      DROP TABLE sent_messages;
      ALTER TABLE sent_messages_by_route RENAME TO sent_messages;
    `,
  },
  {
    version: 8,
    name: 'delivery_list_indexes',
    // The dashboard's filters: by state, report id or date range, newest first by id
    // (keyset paging), from an index however many sent rows pile up. And NetBox's ids of each failing
    // result, so that `preview --id` renders the failing-tests section of a sent mail from the store.
    sql: `
      CREATE INDEX deliveries_state ON deliveries (state, id);
      CREATE INDEX deliveries_report ON deliveries (report_id, id);
      CREATE INDEX deliveries_received ON deliveries (received_at);
      ALTER TABLE reports ADD COLUMN failing_ids TEXT;
    `,
  },
  {
    version: 9,
    name: 'netbox_sources',
    // The NetBox source that posted each delivery (every row stored before belongs to the
    // default source; a constant default only rewrites the schema, not the rows), and the watchdog's
    // state per source, the single row of migration 3 becoming the default source's.
    sql: `
      ALTER TABLE deliveries ADD COLUMN netbox_source TEXT NOT NULL DEFAULT 'default';
      CREATE TABLE watchdog_states (
        source      TEXT    PRIMARY KEY,
        state       TEXT    NOT NULL,
        since       INTEGER,
        created_at  INTEGER NOT NULL,
        changed_at  INTEGER NOT NULL,
        version     INTEGER NOT NULL
      );
      INSERT INTO watchdog_states (source, state, since, created_at, changed_at, version)
        SELECT 'default', state, since, created_at, changed_at, version FROM watchdog_state;
    `,
  },
  COMMON[10],
  COMMON[11],
  COMMON[12],
  {
    version: 13,
    name: 'waivers',
    // Accepted exceptions, never deleted: expiring one moves ends_at to that moment and records who did it.
    // device NULL: every device of the source; until_day as given (YYYY-MM-DD), ends_at when it stops holding.
    sql: `
      CREATE TABLE waivers (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        source      TEXT    NOT NULL,
        test        TEXT    NOT NULL,
        device      TEXT,
        until_day   TEXT    NOT NULL,
        ends_at     INTEGER NOT NULL,
        reason      TEXT    NOT NULL,
        author      TEXT    NOT NULL,
        created_at  INTEGER NOT NULL,
        expired_at  INTEGER,
        expired_by  TEXT
      );
      CREATE INDEX waivers_source_ends ON waivers (source, ends_at);
    `,
  },
  COMMON[14],
  COMMON[15],
  COMMON[16],
  COMMON[17],
];

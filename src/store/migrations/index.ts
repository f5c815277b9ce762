/** One schema migration; applied in order, each in one transaction. Append new entries; never edit one that has shipped. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** What the engines spell differently in the migrations they share. */
interface EngineSql {
  engine: 'sqlite' | 'postgres';
  /** The 64-bit integer: epoch milliseconds, NetBox ids. */
  int64: 'INTEGER' | 'BIGINT';
  bytes: 'BLOB' | 'BYTEA';
  identity: string;
  reminder: string;
  /** PostgreSQL checks a closed set of values; SQLite's tables were created without. */
  check(column: string, values: readonly string[]): string;
}

/** The columns of the watchdog's state (migrations 3 and 9). */
const watchdogColumns = (e: EngineSql): string => `
  state       TEXT    NOT NULL${e.check('state', ['ok', 'overdue'])},
  since       ${e.int64},
  created_at  ${e.int64} NOT NULL,
  changed_at  ${e.int64} NOT NULL,
  version     INTEGER NOT NULL`;

/** Migration 7: an older kept copy's route is its delivery's only sent route, else '' ("not recorded"). */
const SOLE_SENT_ROUTE = `SELECT delivery_id, MAX(route) AS route, MAX(message_id) AS message_id FROM route_mails
          WHERE state = 'sent' GROUP BY delivery_id HAVING COUNT(*) = 1`;

const MIGRATIONS: (Omit<Migration, 'sql'> & { sql: (e: EngineSql) => string })[] = [
  {
    version: 1,
    name: 'deliveries',
    // The outbox; dedup_key stores a delivery once across replicas. Partial indexes keep the claim cheap.
    sql: (e) => `
      CREATE TABLE deliveries (
        id               ${e.identity},
        dedup_key        TEXT    NOT NULL${e.engine === 'sqlite' ? ' UNIQUE' : ''},
        report_id        ${e.int64} NOT NULL,
        report_created   TEXT    NOT NULL,
        completed_at     TEXT    NOT NULL,
        source           TEXT    NOT NULL,
        body             ${e.bytes}   NOT NULL,
        received_at      ${e.int64} NOT NULL,
        state            TEXT    NOT NULL DEFAULT 'queued'${e.check('state', ['queued', 'sending', 'retrying', 'sent', 'dead'])},
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at  ${e.int64},
        lease_owner      TEXT,
        lease_until      ${e.int64},
        last_error       TEXT,
        last_error_code  TEXT,
        message_id       TEXT,
        sent_at          ${e.int64},
        updated_at       ${e.int64} NOT NULL${e.engine === 'postgres' ? ', CONSTRAINT deliveries_dedup_key UNIQUE (dedup_key)' : ''}
      );
      ${
        e.engine === 'sqlite'
          ? 'CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at, id);'
          : `CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE state IN ('queued', 'retrying');
      CREATE INDEX deliveries_leases ON deliveries (lease_until, id) WHERE state = 'sending';
      CREATE INDEX deliveries_state ON deliveries (state, id);`
      }
      CREATE TABLE health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at ${e.int64} NOT NULL);
    `,
  },
  {
    version: 2,
    name: 'reports',
    // One row per report for the trend. failing: JSON [[device, test, severity], ...], NULL = unknown.
    sql: (e) => `
      CREATE TABLE reports (
        dedup_key       TEXT    PRIMARY KEY,
        series          TEXT    NOT NULL,
        report_id       ${e.int64} NOT NULL,
        report_created  TEXT    NOT NULL,
        created_ms      ${e.int64} NOT NULL,
        total_passed    INTEGER NOT NULL,
        total_count     INTEGER NOT NULL,
        high_passed     INTEGER NOT NULL,
        high_count      INTEGER NOT NULL,
        middle_passed   INTEGER NOT NULL,
        middle_count    INTEGER NOT NULL,
        low_passed      INTEGER NOT NULL,
        low_count       INTEGER NOT NULL,
        failing         TEXT,
        failing_count   INTEGER
      );
      CREATE INDEX reports_series_created ON reports (series, created_ms, report_id);
    `,
  },
  {
    version: 3,
    name: 'watchdog_state',
    // One row: whether reports are overdue, with a version for compare-and-set between replicas.
    sql: (e) => `CREATE TABLE watchdog_state (id INTEGER PRIMARY KEY CHECK (id = 1),${watchdogColumns(e)});`,
  },
  {
    version: 4,
    name: 'sent_messages',
    // The mail as it was sent per delivery, for the dashboard (the latest send of a delivery).
    sql: (e) => `
      CREATE TABLE sent_messages (
        delivery_id    ${e.int64} PRIMARY KEY,
        raw            ${e.bytes}   NOT NULL,
        envelope_from  TEXT    NOT NULL,
        envelope_to    TEXT    NOT NULL,
        subject        TEXT    NOT NULL,
        text_part      TEXT,
        html_part      TEXT,
        response       TEXT    NOT NULL,
        sent_at        ${e.int64} NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'route_mails',
    // Per (delivery, route): the decision, taken once, and its mail's state: a retry sends only routes not yet sent.
    sql: (e) => `
      CREATE TABLE route_mails (
        delivery_id      ${e.int64} NOT NULL,
        route            TEXT    NOT NULL,
        position         INTEGER NOT NULL,
        outcome          TEXT    NOT NULL${e.check('outcome', ['send', 'suppressed', 'skipped'])},
        reason           TEXT    NOT NULL,
        reminder         ${e.reminder},
        state            TEXT    NOT NULL${e.check('state', ['pending', 'sent', 'failed', 'suppressed', 'skipped'])},
        message_id       TEXT,
        response         TEXT,
        last_error       TEXT,
        last_error_code  TEXT,
        sent_at          ${e.int64},
        decided_at       ${e.int64} NOT NULL,
        updated_at       ${e.int64} NOT NULL,
        PRIMARY KEY (delivery_id, route)
      );
      CREATE INDEX route_mails_route ON route_mails (route, outcome);
    `,
  },
  {
    version: 6,
    name: 'delivery_report_fields',
    // The report as parsed (NULL in older rows and the relay's own records); ADD COLUMN without a default is cheap.
    sql: (e) => `
      ALTER TABLE deliveries ADD COLUMN display TEXT;
      ALTER TABLE deliveries ADD COLUMN url TEXT;
      ALTER TABLE deliveries ADD COLUMN results_url TEXT;
      ALTER TABLE deliveries ADD COLUMN device_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN test_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN total_passed ${e.int64};
      ALTER TABLE deliveries ADD COLUMN total_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN high_passed ${e.int64};
      ALTER TABLE deliveries ADD COLUMN high_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN middle_passed ${e.int64};
      ALTER TABLE deliveries ADD COLUMN middle_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN low_passed ${e.int64};
      ALTER TABLE deliveries ADD COLUMN low_count ${e.int64};
      ALTER TABLE deliveries ADD COLUMN custom_fields TEXT;
      ALTER TABLE deliveries ADD COLUMN triggered_by TEXT;
    `,
  },
  {
    version: 7,
    name: 'sent_messages_per_route',
    // One kept copy per (delivery, route). SQLite cannot change a primary key in place: the table is rebuilt.
    sql: (e) =>
      e.engine === 'sqlite'
        ? `
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
        FROM sent_messages s LEFT JOIN (${SOLE_SENT_ROUTE}) sole ON sole.delivery_id = s.delivery_id;
      DROP TABLE sent_messages;
      ALTER TABLE sent_messages_by_route RENAME TO sent_messages;
    `
        : `
      ALTER TABLE sent_messages ADD COLUMN route TEXT NOT NULL DEFAULT '', ADD COLUMN message_id TEXT;
      UPDATE sent_messages s SET route = sole.route, message_id = sole.message_id
        FROM (${SOLE_SENT_ROUTE}) sole WHERE sole.delivery_id = s.delivery_id;
      ALTER TABLE sent_messages DROP CONSTRAINT sent_messages_pkey, ADD PRIMARY KEY (delivery_id, route);
    `,
  },
  {
    version: 8,
    name: 'delivery_list_indexes',
    // Indexes for the dashboard's filters; NetBox's ids of failing results, so `preview --id` renders them from the store.
    sql: (e) => `
      ${e.engine === 'sqlite' ? 'CREATE INDEX deliveries_state ON deliveries (state, id);' : ''}
      CREATE INDEX deliveries_report ON deliveries (report_id, id);
      CREATE INDEX deliveries_received ON deliveries (received_at);
      ALTER TABLE reports ADD COLUMN failing_ids TEXT;
    `,
  },
  {
    version: 9,
    name: 'netbox_sources',
    // Each delivery's NetBox source, and the watchdog's state per source (migration 3's row is the default source's).
    sql: (e) => `
      ALTER TABLE deliveries ADD COLUMN netbox_source TEXT NOT NULL DEFAULT 'default';
      CREATE TABLE watchdog_states (source TEXT PRIMARY KEY,${watchdogColumns(e)});
      INSERT INTO watchdog_states (source, state, since, created_at, changed_at, version)
        SELECT 'default', state, since, created_at, changed_at, version FROM watchdog_state;
    `,
  },
  {
    version: 10,
    name: 'digest_periods',
    // A digest route's periods, written with the mail they queue (once across replicas); NULL delivery: before its first run.
    sql: (e) => `
      CREATE TABLE digest_periods (
        route         TEXT    NOT NULL,
        period_start  ${e.int64} NOT NULL,
        period_end    ${e.int64} NOT NULL,
        delivery_id   ${e.int64},
        late          INTEGER NOT NULL,
        queued_at     ${e.int64} NOT NULL,
        PRIMARY KEY (route, period_start),
        UNIQUE (route, period_end)
      );
    `,
  },
  {
    version: 11,
    name: 'route_mail_owner_groups',
    // The owner group of a route mail addressed to NetBox's contacts (JSON), decided once with the plan.
    sql: () => 'ALTER TABLE route_mails ADD COLUMN owner_group TEXT;',
  },
  {
    version: 12,
    name: 'reports_failing_index',
    // Reports still holding a failing set, indexed apart: forgetOldFailing reads ~101 rows, not the whole series.
    sql: () => 'CREATE INDEX reports_series_failing ON reports (series, created_ms, report_id) WHERE failing IS NOT NULL;',
  },
  {
    version: 13,
    name: 'waivers',
    // Accepted exceptions, never deleted (expiring moves ends_at and records who); device NULL: every device.
    sql: (e) => `
      CREATE TABLE waivers (
        id          ${e.identity},
        source      TEXT    NOT NULL,
        test        TEXT    NOT NULL,
        device      TEXT,
        until_day   TEXT    NOT NULL,
        ends_at     ${e.int64} NOT NULL,
        reason      TEXT    NOT NULL,
        author      TEXT    NOT NULL,
        created_at  ${e.int64} NOT NULL,
        expired_at  ${e.int64},
        expired_by  TEXT
      );
      CREATE INDEX waivers_source_ends ON waivers (source, ends_at);
    `,
  },
  {
    version: 14,
    name: 'delivery_kind',
    // What a delivery is (report, digest, watchdog) chooses its composer; rows stored before said it by their key.
    sql: () => `
      ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'report';
      UPDATE deliveries SET kind = 'digest' WHERE dedup_key LIKE 'digest:%';
      UPDATE deliveries SET kind = 'watchdog' WHERE dedup_key LIKE 'watchdog:%';
    `,
  },
  {
    version: 15,
    name: 'report_arrival',
    // Rows written with the webhook: composed = 0 until its failing set is read; arrived_late: a newer one came first.
    sql: () => `
      ALTER TABLE reports ADD COLUMN composed INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE reports ADD COLUMN arrived_late INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 16,
    name: 'report_pair_states',
    // The changed pairs' states (passed, not evaluated), so `preview --id` words its mail as it was sent.
    sql: () => 'ALTER TABLE reports ADD COLUMN pair_states TEXT;',
  },
  {
    version: 17,
    name: 'catch_up',
    // How a delivery arrived; per source the newest report seen (retention never prunes it) and the catch-up lease.
    sql: (e) => `
      ALTER TABLE deliveries ADD COLUMN received_via TEXT NOT NULL DEFAULT 'webhook';
      CREATE TABLE catch_up_sources (
        source           TEXT    PRIMARY KEY,
        seen_created_ms  ${e.int64},
        seen_report_id   ${e.int64},
        lease_owner      TEXT,
        lease_until      ${e.int64} NOT NULL DEFAULT 0,
        succeeded_at     ${e.int64}
      );
    `,
  },
];

function buildMigrations(e: EngineSql): readonly Migration[] {
  return MIGRATIONS.map((m) => ({ ...m, sql: m.sql(e) }));
}

/** What `migrate` answers: the migrations just applied, as `NNN-name` (none when up to date), and the schema version `all` reach. */
export function reportMigrations(all: readonly Migration[], applied: readonly Migration[]) {
  const names = applied.map((m) => `${String(m.version).padStart(3, '0')}-${m.name}`);
  return { applied: names, version: Math.max(0, ...all.map((m) => m.version)) };
}

export type MigrationReport = ReturnType<typeof reportMigrations>;

/** SQLite's schema migrations, applied in order at open; `PRAGMA user_version` records the last one. */
export const SQLITE_MIGRATIONS = buildMigrations({
  engine: 'sqlite',
  int64: 'INTEGER',
  bytes: 'BLOB',
  identity: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  reminder: 'INTEGER NOT NULL DEFAULT 0',
  check: () => '',
});

/** Applied in order at start under an advisory lock and recorded in `schema_migrations`. */
export const PG_MIGRATIONS = buildMigrations({
  engine: 'postgres',
  int64: 'BIGINT',
  bytes: 'BYTEA',
  identity: 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY',
  reminder: 'BOOLEAN NOT NULL DEFAULT FALSE',
  check: (column, values) => ` CHECK (${column} IN (${values.map((v) => `'${v}'`).join(', ')}))`,
});

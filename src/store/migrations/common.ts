/**
 * The migrations whose SQL is the same on SQLite and PostgreSQL but for the name of the 64-bit integer type
 * (`INTEGER`, `BIGINT`): written once, placed by version in each engine's list.
 */
export interface Migration {
  version: number;
  name: string;
  /** Runs in one transaction. */
  sql: string;
}

/** The engine's 64-bit integer: epoch milliseconds, NetBox ids. */
export type Int64Type = 'INTEGER' | 'BIGINT';

/** Word for word the same on both engines. */
const SAME_ON_BOTH = {
  11: {
    version: 11,
    name: 'route_mail_owner_groups',
    // The owner group of a route mail addressed to NetBox's contacts (JSON), decided once
    // with the plan; NULL for every other mail.
    sql: `
      ALTER TABLE route_mails ADD COLUMN owner_group TEXT;
    `,
  },
  12: {
    version: 12,
    name: 'reports_failing_index',
    // The reports of a series that still hold a failing set, indexed on their own, so saving a report
    // (forgetOldFailing keeps the newest 100) looks at ~101 rows, not at the whole series, which grows with age.
    sql: `
      CREATE INDEX reports_series_failing ON reports (series, created_ms, report_id) WHERE failing IS NOT NULL;
    `,
  },
  14: {
    version: 14,
    name: 'delivery_kind',
    // What a delivery is (report, digest, watchdog) chooses its composer; rows stored before said it by their key.
    sql: `
      ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'report';
      UPDATE deliveries SET kind = 'digest' WHERE dedup_key LIKE 'digest:%';
      UPDATE deliveries SET kind = 'watchdog' WHERE dedup_key LIKE 'watchdog:%';
    `,
  },
  15: {
    version: 15,
    name: 'report_arrival',
    // A report's row is written when its webhook is stored, before its mail is composed, so a successor
    // compares with it at once. composed = 0 until its failing set has been read (every row stored before
    // was written by a composed mail); arrived_late = 1 when a newer report of its series was stored before it.
    // A constant default only rewrites the schema, not the rows.
    sql: `
      ALTER TABLE reports ADD COLUMN composed INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE reports ADD COLUMN arrived_late INTEGER NOT NULL DEFAULT 0;
    `,
  },
  16: {
    version: 16,
    name: 'report_pair_states',
    // What NetBox's results said of the pairs that changed since the previous report (passed, or not
    // evaluated), kept with the report so that `preview --id` words its mail as it was sent.
    sql: `
      ALTER TABLE reports ADD COLUMN pair_states TEXT;
    `,
  },
} satisfies Record<number, Migration>;

export function buildCommonMigrations(int64: Int64Type): Record<2 | 10 | 11 | 12 | 14 | 15 | 16 | 17, Migration> {
  return {
    ...SAME_ON_BOTH,
    2: {
      version: 2,
      name: 'reports',
      // One row per report for the trend. failing: JSON [[device, test, severity], ...], NULL = unknown.
      sql: `
        CREATE TABLE reports (
          dedup_key       TEXT    PRIMARY KEY,
          series          TEXT    NOT NULL,
          report_id       ${int64} NOT NULL,
          report_created  TEXT    NOT NULL,
          created_ms      ${int64} NOT NULL,
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
    10: {
      version: 10,
      name: 'digest_periods',
      // One row per period of a digest route, written once (route + period start is the key,
      // so replicas and restarts queue each period's digest once), in the transaction that queues its
      // mail in the outbox. delivery_id is NULL for the period that ended before the route's first run.
      sql: `
        CREATE TABLE digest_periods (
          route         TEXT    NOT NULL,
          period_start  ${int64} NOT NULL,
          period_end    ${int64} NOT NULL,
          delivery_id   ${int64},
          late          INTEGER NOT NULL,
          queued_at     ${int64} NOT NULL,
          PRIMARY KEY (route, period_start),
          UNIQUE (route, period_end)
        );
      `,
    },
    17: {
      version: 17,
      name: 'catch_up',
      // How a delivery reached the relay (its webhook, or fetched from NetBox by the catch-up), and per NetBox
      // source the newest report seen (kept apart from the deliveries, which retention prunes) with the lease
      // that lets one relay at a time catch up.
      sql: `
        ALTER TABLE deliveries ADD COLUMN received_via TEXT NOT NULL DEFAULT 'webhook';
        CREATE TABLE catch_up_sources (
          source           TEXT    PRIMARY KEY,
          seen_created_ms  ${int64},
          seen_report_id   ${int64},
          lease_owner      TEXT,
          lease_until      ${int64} NOT NULL DEFAULT 0,
          succeeded_at     ${int64}
        );
      `,
    },
  };
}

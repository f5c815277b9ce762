import { buildMigrations, SOLE_SENT_ROUTE, type Migration } from './common';

/** SQLite's schema migrations, applied in order at open; `PRAGMA user_version` records the last one. */
export const SQLITE_MIGRATIONS: readonly Migration[] = buildMigrations(
  {
    engine: 'sqlite',
    int64: 'INTEGER',
    bytes: 'BLOB',
    identity: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    reminder: 'INTEGER NOT NULL DEFAULT 0',
    check: () => '',
  },
  [
    {
      version: 7,
      name: 'sent_messages_per_route',
      // One kept copy per (delivery, route), so a report mailed to two routes keeps both mails.
      // SQLite cannot change a primary key in place: the table is rebuilt in this migration's transaction.
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
        FROM sent_messages s LEFT JOIN (${SOLE_SENT_ROUTE}) sole ON sole.delivery_id = s.delivery_id;
      DROP TABLE sent_messages;
      ALTER TABLE sent_messages_by_route RENAME TO sent_messages;
    `,
    },
  ],
);

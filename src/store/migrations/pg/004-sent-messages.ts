/** PostgreSQL migration 004: the mail as it was sent per delivery (mirrors SQLite migration 4). */
export const MIGRATION_004_SENT_MESSAGES = {
  version: 4,
  name: 'sent_messages',
  sql: `
    CREATE TABLE sent_messages (
      delivery_id    BIGINT  PRIMARY KEY,
      raw            BYTEA   NOT NULL,
      envelope_from  TEXT    NOT NULL,
      envelope_to    TEXT    NOT NULL,
      subject        TEXT    NOT NULL,
      text_part      TEXT,
      html_part      TEXT,
      response       TEXT    NOT NULL,
      sent_at        BIGINT  NOT NULL
    );
  `,
} as const;

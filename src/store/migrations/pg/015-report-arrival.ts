/**
 * PostgreSQL migration 015 (mirrors SQLite migration 15): a report's row is written when its webhook is
 * stored, before its mail is composed, so a successor compares with it at once. `composed` = 0 until its
 * failing set has been read (every row stored before was written by a composed mail); `arrived_late` = 1
 * when a newer report of its series was stored before it.
 */
export const MIGRATION_015_REPORT_ARRIVAL = {
  version: 15,
  name: 'report_arrival',
  sql: `
    ALTER TABLE reports ADD COLUMN composed INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE reports ADD COLUMN arrived_late INTEGER NOT NULL DEFAULT 0;
  `,
} as const;

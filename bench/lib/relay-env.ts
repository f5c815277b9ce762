import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE_NAME } from '../../src/store';

/** The webhook secret every benchmark signs with. */
export const BENCH_SECRET = 'bench-webhook-secret-0123456789';

/**
 * The environment every benchmark gives the relay: signed webhooks, SQLite synchronous=FULL (an
 * acknowledged delivery survives a crash and a power cut), warn-level logs so that logging does
 * not dominate, one recipient, the default pool of 5 SMTP connections.
 */
export function buildRelayEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    WEBHOOK_SECRET: BENCH_SECRET,
    SQLITE_SYNCHRONOUS: 'FULL',
    LOG_LEVEL: 'warn',
    MAIL_TO: 'ops@example.com',
    MAIL_FROM: 'Compliance Relay <relay@example.com>',
    SMTP_POOL_SIZE: '5',
    ...overrides,
  };
}

/** Rows the relay committed, read from its SQLite file after it stopped. */
export function countStoredRows(dataDir: string): number {
  const db = new Database(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM deliveries').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

import pg from 'pg';
import { resolveChromium } from './browser';
import { TEST_DATABASE_URL } from './pg-schema';

/**
 * Runs once before jest starts its workers: what the whole suite needs is checked here, so a missing piece is
 * one clear line instead of dozens of failures, and nothing is ever skipped.
 * - The browser is unpacked once, so parallel workers never race to write the same binary.
 * - PostgreSQL must answer at TEST_DATABASE_URL.
 */
export default async function globalSetup(): Promise<void> {
  await resolveChromium();
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    const where = new URL(TEST_DATABASE_URL);
    where.password = '';
    throw new Error(
      `PostgreSQL does not answer at ${where.toString()} (${(err as Error).message}): start it ` +
        '(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set TEST_DATABASE_URL',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

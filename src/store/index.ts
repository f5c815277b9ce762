import { PgStore } from './pg-store';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store';
import type { Store } from './sql-store';

export * from './types';
export { SqliteStore, SQLITE_FILE_NAME, loadSqliteDriver } from './sqlite-store';
export { PgStore, PG_POOL_SIZE } from './pg-store';
export { type Store } from './sql-store';
export { PG_MIGRATIONS } from './migrations';
export { lockDataDir, DataDirLockedError, type DataDirLock } from './lock-data-dir';
export { createRetention } from './create-retention';
export {
  buildJobDelivery,
  parseJobDelivery,
  type DigestJob,
  type InternalJob,
  type MissedReportsNotice,
  type WatchdogAlert,
} from './internal-job';

/** PostgreSQL when DATABASE_URL is set (migrated on first use: no network I/O now), else SQLite (migrated now). */
export function openStore(
  settings: Omit<SqliteStoreOptions, 'fsync'> & { databaseUrl?: string },
  hooks: { onIdleError?: (error: Error) => void } = {},
): Store {
  if (settings.databaseUrl) {
    return new PgStore({ connectionString: settings.databaseUrl, onIdleError: hooks.onIdleError });
  }
  return SqliteStore.open(settings);
}

import { PgStore } from './pg-store';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store';
import type { Store } from './sql-store';

/** DATABASE_URL set: PostgreSQL, shared by replicas. Unset: SQLite under `dataDir`, one process. */
type StoreSettings = Omit<SqliteStoreOptions, 'fsync'> & { databaseUrl?: string };

/**
 * PostgreSQL when DATABASE_URL is set, else SQLite. SQLite migrates now; PostgreSQL on `migrate()` or its
 * first statement, so that building the relay does no network I/O.
 */
export function openStore(settings: StoreSettings, hooks: { onIdleError?: (error: Error) => void } = {}): Store {
  if (settings.databaseUrl) {
    return new PgStore({ connectionString: settings.databaseUrl, onIdleError: hooks.onIdleError });
  }
  return SqliteStore.open(settings);
}

import { PgStore } from './pg-store';
import { SqliteStore } from './sqlite-store';
import { ThreadedSqliteStore } from './threaded-sqlite-store';
import type { Store } from './types';

export interface StoreSettings {
  dataDir: string;
  sqliteSynchronous: 'FULL' | 'NORMAL' | 'EXTRA';
  /** Set: PostgreSQL, shared by replicas. Unset: SQLite under `dataDir`, one process. */
  databaseUrl?: string;
  databasePoolSize?: number;
}

/**
 * Opens the store the configuration asks for: PostgreSQL when DATABASE_URL is set, else SQLite.
 * SQLite migrates now (with `sqliteThread`, on its own thread once built: see ThreadedSqliteStore); PostgreSQL migrates on `migrate()` (the relay's start) or its first statement,
 * so that building the relay does no network I/O.
 */
export function openStore(settings: StoreSettings, hooks: { onIdleError?: (error: Error) => void; sqliteThread?: boolean } = {}): Store {
  if (settings.databaseUrl) {
    return new PgStore({ connectionString: settings.databaseUrl, poolSize: settings.databasePoolSize, onIdleError: hooks.onIdleError });
  }
  const options = { dataDir: settings.dataDir, synchronous: settings.sqliteSynchronous };
  // A long-running relay keeps SQLite off its event loop; a short command need not start a thread.
  return (hooks.sqliteThread ? ThreadedSqliteStore.open(options) : undefined) ?? SqliteStore.open(options);
}

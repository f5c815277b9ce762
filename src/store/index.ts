export * from './types';
export { SqliteStore, SQLITE_FILE_NAME, loadSqliteDriver, type SqliteStoreOptions } from './sqlite-store';
export { PgStore, PG_MIGRATION_LOCK_KEY, type PgStoreOptions } from './pg-store';
export { PG_MIGRATIONS, type PgMigration } from './migrations/pg';
export { openStore, type StoreSettings } from './open-store';
export { lockDataDir, DataDirLockedError, DATA_DIR_LOCK_FILE, DATA_DIR_PID_FILE, type DataDirLock } from './lock-data-dir';
export { createRetention, DAY_MS, type Retention } from './create-retention';
export { buildNewDelivery } from './build-new-delivery';

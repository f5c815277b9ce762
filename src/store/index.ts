export * from './types';
export { SqliteStore, SQLITE_FILE_NAME, loadSqliteDriver } from './sqlite-store';
export { PgStore, PG_POOL_SIZE } from './pg-store';
export { type Store } from './sql-store';
export { PG_MIGRATIONS } from './migrations/pg';
export { openStore } from './open-store';
export { lockDataDir, DataDirLockedError, type DataDirLock } from './lock-data-dir';
export { createRetention } from './create-retention';
export { buildNewDelivery } from './build-new-delivery';
export {
  buildJobDelivery,
  parseJobDelivery,
  type DigestJob,
  type InternalJob,
  type MissedReportsNotice,
  type WatchdogAlert,
} from './internal-job';

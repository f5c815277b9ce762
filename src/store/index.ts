export * from './types';
export { SqliteStore, SQLITE_FILE_NAME, type SqliteStoreOptions } from './sqlite-store';

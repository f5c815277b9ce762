import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { Config } from '../config';
import { loadSqliteDriver, openStore, SQLITE_FILE_NAME, StorageUnavailableError } from '../store';
import { EXIT_UNAVAILABLE, EXIT_USAGE, type CliIo } from './io';

/** `migrate`: brings the store's schema up to date, as the relay does at start (run before a rolling upgrade, say). */
export async function migrateStore(config: Config, io: CliIo): Promise<number> {
  const url = config.store.databaseUrl;
  // host:port/database, never the credentials.
  const database = url && URL.canParse(url) ? `${new URL(url).host}${new URL(url).pathname}` : '(unparseable DATABASE_URL)';
  const where = url ? `PostgreSQL ${database}` : `SQLite under ${config.store.dataDir}`;
  let store;
  try {
    store = openStore(config.store);
    const report = await store.migrate();
    io.stdout.write(
      report.applied.length > 0
        ? `Applied ${report.applied.length} migration(s) to ${where}: ${report.applied.join(', ')}. Schema version ${report.version}.\n`
        : `${where} is up to date (schema version ${report.version}).\n`,
    );
    return 0;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (!(error instanceof StorageUnavailableError || code?.startsWith('SQLITE_'))) throw error;
    io.stderr.write(`compliance-relay: cannot migrate ${where} (${code}): ${(error as Error).message}\n`);
    return EXIT_UNAVAILABLE;
  } finally {
    await store?.close();
  }
}

/** `backup <file>`: a consistent copy of the SQLite store while the relay runs (`VACUUM INTO` reads a WAL snapshot). */
export function backupStore(target: string, config: Config, io: CliIo): number {
  if (config.store.databaseUrl) {
    io.stderr.write('compliance-relay backup: the store is PostgreSQL (DATABASE_URL): back it up with pg_dump or your database backups.\n');
    return EXIT_USAGE;
  }
  const source = path.join(config.store.dataDir, SQLITE_FILE_NAME);
  const destination = path.resolve(io.cwd, target);
  if (fs.existsSync(destination)) {
    io.stderr.write(`compliance-relay backup: ${destination} exists; give a new file name (a backup never overwrites).\n`);
    return EXIT_USAGE;
  }
  let db: Database.Database | undefined;
  try {
    const Sqlite = loadSqliteDriver();
    db = new Sqlite(source, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(destination);
    const copy = new Sqlite(destination, { readonly: true });
    const { n } = copy.prepare('SELECT COUNT(*) AS n FROM deliveries').get() as { n: number };
    copy.close();
    io.stdout.write(`Backed up ${source} to ${destination} (${n} deliveries, ${fs.statSync(destination).size} bytes).\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`compliance-relay backup: cannot back up ${source}: ${(error as Error).message}\n`);
    return EXIT_UNAVAILABLE;
  } finally {
    db?.close();
  }
}

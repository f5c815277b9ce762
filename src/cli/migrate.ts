import type { Config } from '../config';
import { openStore, StorageUnavailableError } from '../store';
import { EXIT_UNAVAILABLE, type CliIo } from './io';

/**
 * `compliance-relay migrate`: brings the store's schema up to date and says what it did. The relay
 * does the same at start; this runs it explicitly (before a rolling upgrade of replicas, say).
 */
export async function migrateStore(config: Config, io: CliIo): Promise<number> {
  const where = config.store.databaseUrl
    ? `PostgreSQL ${describeDatabase(config.store.databaseUrl)}`
    : `SQLite under ${config.store.dataDir}`;
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

/** host:port/database, never the credentials. */
function describeDatabase(url: string): string {
  if (!URL.canParse(url)) return '(unparseable DATABASE_URL)';
  const { host, pathname } = new URL(url);
  return `${host}${pathname}`;
}

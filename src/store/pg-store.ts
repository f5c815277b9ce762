import type pg from 'pg';
import { PG_MIGRATIONS, reportMigrations, type MigrationReport } from './migrations';
import { POSTGRES_DIALECT } from './statement';
import { TurnBatch, type Pending } from './turn-batch';
import { hasArrival } from './report-rows';
import { SqlStore } from './sql-store';
import { insertDeliveries, ROWS_PER_STATEMENT, type Work } from './store-work';
import { StorageUnavailableError, storeClosedError, type InsertResult, type NewDelivery } from './types';

export interface PgStoreOptions {
  /** `postgres://user:password@host:5432/database` (query options such as `sslmode` are honoured). */
  connectionString: string;
  /** Called when a pooled connection fails (PostgreSQL restarted): for a log line. */
  onIdleError?: (error: Error) => void;
}

/** Shared by sends and inserts; ten per replica leave room under the default max_connections (100). */
export const PG_POOL_SIZE = 10;

/** The key of the advisory lock that serialises migrations across replicas starting together. */
const PG_MIGRATION_LOCK_KEY = 0x636f6d70; // "comp"

/** The store for several replicas. A turn's inserts go in multi-row INSERTs of up to {@link ROWS_PER_STATEMENT} rows. */
export class PgStore extends SqlStore {
  readonly singleOwner = false;
  private readonly pool: pg.Pool;
  private readonly inserts = new TurnBatch<NewDelivery, InsertResult>((batch) => {
    const done = this.flush(batch).finally(() => this.flushing.delete(done));
    this.flushing.add(done);
  });
  private flushing = new Set<Promise<void>>();
  private closed = false;
  /** Migrations run once, before the first statement; a failure (database down) is retried on the next call. */
  private ready: Promise<MigrationReport> | undefined;

  /** Only this of the options is kept: the connection string (a password) stays with the pool. */
  private readonly onIdleError: PgStoreOptions['onIdleError'];

  constructor(options: PgStoreOptions) {
    super();
    this.onIdleError = options.onIdleError;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy: a relay on SQLite, `--help` and `check-config` never load it
    const driver = require('pg') as typeof pg;
    // BIGINT (epoch milliseconds, ids, counts) as numbers: every value we store fits in 2^53.
    const types = new driver.TypeOverrides();
    types.setTypeParser(driver.types.builtins.INT8, Number);
    this.pool = new driver.Pool({
      connectionString: options.connectionString,
      max: PG_POOL_SIZE,
      // How long to wait for a connection before answering 503.
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      // A stuck database is a 503, not a hung request; the client-side bound covers a server that vanished.
      statement_timeout: 15_000,
      query_timeout: 20_000,
      application_name: 'compliance-relay',
      types,
    });
    // Unhandled, an idle connection broken by a PostgreSQL restart would end the process; the pool replaces it.
    this.pool.on('error', (error) => this.onIdleError?.(error));
  }

  /** One transaction under `pg_advisory_xact_lock`: a replica starting at the same moment waits, then finds them applied. */
  migrate(): Promise<MigrationReport> {
    this.ready ??= this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PG_MIGRATION_LOCK_KEY]);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const pending = PG_MIGRATIONS.filter((m) => !rows.some((r) => r.version === m.version));
      for (const migration of pending) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      }
      return reportMigrations(PG_MIGRATIONS, pending);
    }).catch((error: unknown) => {
      this.ready = undefined;
      throw toStorageError(error);
    });
    return this.ready;
  }

  /** Maps connection and server failures to 503s. */
  private async afterMigrations<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw storeClosedError();
    await this.migrate();
    try {
      return await fn();
    } catch (error) {
      throw toStorageError(error);
    }
  }

  protected read<T>(work: Work<T>): Promise<T> {
    return this.afterMigrations(() => runWork(this.pool, work));
  }

  protected write<T>(work: Work<T>, { atomic }: { atomic: boolean }): Promise<T> {
    return this.afterMigrations(() => (atomic ? this.transaction((client) => runWork(client, work)) : runWork(this.pool, work)));
  }

  /**
   * One transaction on one pooled connection. Its 'error' listener (a terminated connection, 57P01, would
   * otherwise end the process; it is destroyed on release) is attached in pg-pool's callback: a database in
   * fast shutdown sends its FATAL before an `await` would resume.
   */
  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let broken = false;
    const onError = (error: Error) => {
      broken = true;
      this.onIdleError?.(error);
    };
    const [client, release] = await new Promise<[pg.PoolClient, (destroy: boolean) => void]>((resolve, reject) => {
      this.pool.connect((error, connected, done) => {
        if (error || !connected) return reject(error ?? new Error('the pool handed over no connection'));
        connected.on('error', onError);
        resolve([connected, done]);
      });
    });
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.off('error', onError);
      release(broken);
    }
  }

  override insertDelivery(delivery: NewDelivery): Promise<InsertResult> {
    if (this.closed) return Promise.reject(storeClosedError());
    return this.inserts.add(delivery);
  }

  private async flush(batch: Pending<NewDelivery, InsertResult>[]): Promise<void> {
    for (let start = 0; start < batch.length; start += ROWS_PER_STATEMENT) {
      const chunk = batch.slice(start, start + ROWS_PER_STATEMENT);
      try {
        const deliveries = chunk.map((p) => p.item);
        // A chunk without report rows to write stays one statement; with them, one transaction.
        const results = await this.write(insertDeliveries(deliveries), { atomic: deliveries.some(hasArrival) });
        chunk.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        for (const p of chunk) p.reject(error);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Inserts already accepted are committed (or rejected) before the pool goes away.
    this.inserts.flush();
    await Promise.allSettled([...this.flushing]);
    this.closed = true;
    await this.pool.end();
  }
}

async function runWork<T>(queryable: pg.Pool | pg.PoolClient, work: Work<T>): Promise<T> {
  let step = work.next();
  while (!step.done) {
    const { statement, params, result } = step.value;
    const { rows, rowCount } = await queryable.query(statement.compile(POSTGRES_DIALECT).text, statement.bind(POSTGRES_DIALECT, params));
    step = work.next(result === 'rows' ? rows : (rowCount ?? 0));
  }
  return step.value;
}

/**
 * SQLSTATE classes that are the query's own fault (data, constraint, syntax): no retry helps. Anything else
 * (connection lost, timeout, shutdown 57P01, read-only 25006, disk full 53100) is "cannot commit now": 503.
 */
const PROGRAMMING_ERROR_CLASSES = new Set(['22', '23', '42', '2B', '2D', '3F', '44']);

function toStorageError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && PROGRAMMING_ERROR_CLASSES.has(code.slice(0, 2))) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StorageUnavailableError(`the outbox cannot commit: ${message}`, typeof code === 'string' ? `PG_${code}` : 'PG_UNAVAILABLE', {
    cause: error,
  });
}

import type pg from 'pg';
import type { ReportCursor, ReportPoint, ReportReadOptions, ReportSnapshot } from '../trend';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { PG_MIGRATIONS, type PgMigration } from './migrations/pg';
import { POSTGRES_DIALECT } from './dialect';
import {
  buildArriveReports,
  buildInsertDeliveries,
  queries,
  selectListDeliveries,
  toArrivalsParams,
  toInsertParams,
  toListParams,
} from './queries';
import type { Statement } from './statement';
import { TurnBatch } from './turn-batch';
import { buildPlanStatements, buildReportStatements, buildSettlementStatements } from './settle-statements';
import {
  decodeClaimedRows,
  decodeDeliveryRow,
  decodeListedRows,
  decodeStateCounts,
  findMissingKeys,
  resolveInsertResults,
} from './delivery-rows';
import { decodeReportPointRow, decodeReportRow, hasArrival, toArrivalParams, toReportParams } from './report-rows';
import { buildRouteGroupsPattern, decodeRouteMailRow } from './route-mail-rows';
import { fromSentMessageRow } from './sent-message-rows';
import { decodeWatchdogRow } from './watchdog-rows';
import { decodeDigestPeriodRow } from './digest-rows';
import { decodeWaiverRow, parseStoredWaiverId, selectListWaivers, toWaiverParams, waiverQueries } from './waiver-rows';
import type { NewWaiver, Waiver, WaiverFilter } from '../waivers';
import { StorageUnavailableError } from './types';
import { catchUpQueries, decodeCatchUpRow } from './catch-up-rows';
import type {
  SettledBatch,
  CatchUpState,
  ClaimedDelivery,
  DeliveryRecord,
  DeliveryState,
  DigestPeriod,
  InsertResult,
  ListOptions,
  MigrationReport,
  NewDelivery,
  QueueDigestInput,
  QueuedDigest,
  RouteMailRecord,
  SentMessage,
  Store,
  WatchdogState,
  WatchdogStateName,
} from './types';

export interface PgStoreOptions {
  /** `postgres://user:password@host:5432/database` (query options such as `sslmode` are honoured). */
  connectionString: string;
  /** Connections per relay process. */
  poolSize?: number;
  /** How long to wait for a connection (from the pool or a new one) before answering 503. */
  connectionTimeoutMs?: number;
  /** Bound on any one statement, so a stuck database turns into a 503 rather than a hung request. */
  statementTimeoutMs?: number;
  /** Called when an idle pooled connection fails (PostgreSQL restarted): for a log line. */
  onIdleError?: (error: Error) => void;
}

/** The key of the advisory lock that serialises migrations across replicas starting together. */
export const PG_MIGRATION_LOCK_KEY = 0x636f6d70; // "comp"

/** Rows per multi-row INSERT: 22 parameters each (delivery and report columns; 13 for the report history row) stays below PostgreSQL's 65535. */
const INSERT_CHUNK = 1000;

interface PendingInsert {
  delivery: NewDelivery;
  resolve: (result: InsertResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The pg driver, loaded by the first PgStore: a relay on SQLite, `--help` and `check-config` never
 * load it (it took longer to load than the rest of the CLI together).
 */
function loadPg(): typeof pg {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only with DATABASE_URL
  return require('pg') as typeof pg;
}

/** BIGINT (epoch milliseconds, ids, counts) as numbers: every value we store fits in 2^53. */
function buildTypes(driver: typeof pg): { getTypeParser: typeof pg.types.getTypeParser } {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
      oid === (driver.types.builtins.INT8 as number)
        ? (value: string) => Number(value)
        : driver.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

/**
 * The store for several replicas: one PostgreSQL database shared by every relay process.
 * The same contract as {@link SqliteStore}; what differs is who may take work. Claims use
 * `FOR UPDATE SKIP LOCKED` with a lease, so replicas never claim the same delivery at once, and a
 * replica that dies loses its claims when their lease expires. The unique constraint on the dedup key
 * makes two replicas receiving the same delivery at the same moment store it once.
 *
 * Inserts are group-committed: every delivery arriving in the same event-loop turn goes in one
 * multi-row INSERT (one commit), and each caller's promise resolves only after that commit.
 */
export class PgStore implements Store {
  /** Several processes share the database: none may release the others' leases at boot. */
  readonly singleOwner = false;
  private readonly pool: pg.Pool;
  /** The inserts of this event-loop turn, committed together on the next. */
  private readonly inserts = new TurnBatch<PendingInsert>((batch) => this.startFlush(batch));
  private flushing = new Set<Promise<void>>();
  private closed = false;
  /** Migrations run once, before the first statement; a failure (database down) is retried on the next call. */
  private ready: Promise<MigrationReport> | undefined;
  private readonly onIdleError: ((error: Error) => void) | undefined;

  constructor(options: PgStoreOptions) {
    const driver = loadPg();
    this.pool = new driver.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: options.statementTimeoutMs ?? 15_000,
      // The client-side bound also covers a server that vanished without closing the socket.
      query_timeout: (options.statementTimeoutMs ?? 15_000) + 5_000,
      application_name: 'compliance-relay',
      types: buildTypes(driver),
    });
    // An idle connection broken by a PostgreSQL restart emits 'error' on the pool; unhandled, it would
    // end the process. The pool drops that connection and opens a new one on the next checkout.
    this.onIdleError = options.onIdleError;
    this.pool.on('error', (error) => options.onIdleError?.(error));
  }

  /**
   * Brings the schema up to date under `pg_advisory_lock`, so replicas starting together apply each
   * migration once; applied versions are recorded in `schema_migrations`. Safe to call again.
   */
  migrate(): Promise<MigrationReport> {
    if (!this.ready) {
      this.ready = this.applyMigrations(PG_MIGRATIONS).catch((error: unknown) => {
        this.ready = undefined;
        throw toStorageError(error);
      });
    }
    return this.ready;
  }

  /**
   * Checks a connection out of the pool with an 'error' listener for as long as it is held: a
   * checked-out connection that PostgreSQL terminates (a restart, 57P01) between two statements
   * emits 'error', which without a listener would end the process. Such a connection is destroyed
   * on release instead of going back to the pool.
   *
   * The listener is attached inside pg-pool's callback, not after its promise: a new connection is
   * handed over while the driver is still reading the TCP segment that finished the start-up, and a
   * database in fast shutdown sends its FATAL in that same segment. Behind an `await`, that 'error'
   * found no listener and ended the process.
   */
  private checkout(): Promise<{ client: pg.PoolClient; release: (broken: boolean) => void }> {
    return new Promise((resolve, reject) => {
      this.pool.connect((error, client, done) => {
        if (error || !client) {
          reject(error ?? new Error('the pool handed over no connection'));
          return;
        }
        let lost = false;
        const onError = (clientError: Error) => {
          lost = true;
          this.onIdleError?.(clientError);
        };
        client.on('error', onError);
        resolve({
          client,
          release: (broken) => {
            client.off('error', onError);
            done(broken || lost);
          },
        });
      });
    });
  }

  private async applyMigrations(migrations: readonly PgMigration[]): Promise<MigrationReport> {
    const { client, release } = await this.checkout();
    let broken = false;
    try {
      await client.query('SELECT pg_advisory_lock($1)', [PG_MIGRATION_LOCK_KEY]);
      try {
        await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
        const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
        const done = new Set(rows.map((r) => r.version));
        const applied: string[] = [];
        for (const migration of migrations) {
          if (done.has(migration.version)) continue;
          await client.query('BEGIN');
          try {
            await client.query(migration.sql);
            await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw error;
          }
          applied.push(`${String(migration.version).padStart(3, '0')}-${migration.name}`);
        }
        const version = Math.max(0, ...migrations.map((m) => m.version));
        return { applied, version };
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [PG_MIGRATION_LOCK_KEY]).catch(() => {
          broken = true;
        });
      }
    } catch (error) {
      broken = true;
      throw error;
    } finally {
      // A connection whose unlock may not have happened is discarded: closing it frees the lock.
      release(broken);
    }
  }

  /** Runs statements on the pool after the migrations, mapping connection and server failures to 503s. */
  private async onPool<T>(fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
    if (this.closed) throw new StorageUnavailableError('the store is closed', 'STORE_CLOSED');
    await this.migrate();
    try {
      return await fn(this.pool);
    } catch (error) {
      throw toStorageError(error);
    }
  }

  /** Runs a statement of queries.ts; resolves with how many rows it changed. */
  private async execute<P extends object>(statement: Statement<P, unknown>, params: P): Promise<number> {
    return (await this.onPool((pool) => runStatement(pool, statement, params))).rowCount ?? 0;
  }

  /** Runs a query of queries.ts; resolves with its rows. */
  private async selectAll<P extends object, R>(statement: Statement<P, R>, params: P): Promise<R[]> {
    return (await this.onPool((pool) => runStatement(pool, statement, params))).rows;
  }

  /** Runs `fn` in one transaction on one pooled connection; rolled back (and mapped to 503) on failure. */
  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new StorageUnavailableError('the store is closed', 'STORE_CLOSED');
    await this.migrate();
    let checkedOut: Awaited<ReturnType<PgStore['checkout']>>;
    try {
      checkedOut = await this.checkout();
    } catch (error) {
      throw toStorageError(error);
    }
    const { client, release } = checkedOut;
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw toStorageError(error);
    } finally {
      release(broken);
    }
  }

  insertDelivery(delivery: NewDelivery): Promise<InsertResult> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new StorageUnavailableError('the store is closed', 'STORE_CLOSED'));
        return;
      }
      this.inserts.add({ delivery, resolve, reject });
    });
  }

  /** Starts committing a turn's inserts; close() waits for what is under way. */
  private startFlush(batch: PendingInsert[]): void {
    const done = this.flush(batch).finally(() => this.flushing.delete(done));
    this.flushing.add(done);
  }

  /** Commits a batch of inserts (one statement per chunk) and settles each caller's promise. */
  private async flush(batch: PendingInsert[]): Promise<void> {
    for (let start = 0; start < batch.length; start += INSERT_CHUNK) {
      const chunk = batch.slice(start, start + INSERT_CHUNK);
      try {
        const deliveries = chunk.map((p) => p.delivery);
        // A chunk without report rows to write stays one statement; with them, one transaction.
        const results = deliveries.some(hasArrival)
          ? await this.transaction((client) => insertDeliveries(client, deliveries))
          : await this.onPool((pool) => insertDeliveries(pool, deliveries));
        chunk.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        for (const p of chunk) p.reject(error);
      }
    }
  }

  async claimDue({
    now,
    limit,
    owner,
    leaseMs,
  }: {
    now: number;
    limit: number;
    owner: string;
    leaseMs: number;
  }): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    // SKIP LOCKED (see the statement): replicas claiming at the same moment each get different rows.
    return decodeClaimedRows(await this.selectAll(queries.deliveries.claimDue, { now, limit, owner, leaseUntil: now + leaseMs }));
  }

  async extendLeases({ ids, owner, now, leaseMs }: { ids: number[]; owner: string; now: number; leaseMs: number }): Promise<number> {
    if (ids.length === 0) return 0;
    return this.execute(queries.deliveries.extendLeases, { ids, owner, leaseUntil: now + leaseMs });
  }

  async settleBatch(batch: SettledBatch): Promise<void> {
    await this.transaction(async (client) => {
      for (const d of batch.deliveries) {
        if (d.plan) {
          // The lock on the delivery row makes the whole plan come from one replica should two settle it at once.
          await runStatement(client, queries.deliveries.lock, { id: d.id });
          if ((await runStatement(client, queries.routeMails.count, { deliveryId: d.id })).rows[0].n === 0)
            for (const s of buildPlanStatements(d.id, d.plan, batch.now)) await runStatement(client, s.statement, s.params);
        }
        for (const s of buildSettlementStatements(d, batch.now)) await runStatement(client, s.statement, s.params);
      }
      for (const s of buildReportStatements(batch)) await runStatement(client, s.statement, s.params);
    });
  }

  releaseLeases(now: number): Promise<number> {
    return this.execute(queries.deliveries.releaseLeases, { now });
  }

  async getDelivery(id: number): Promise<DeliveryRecord | undefined> {
    const [row] = await this.selectAll(queries.deliveries.get, { id });
    return row && decodeDeliveryRow(row);
  }

  async listDeliveries(options: ListOptions = {}): Promise<DeliveryRecord[]> {
    const { params, ascending } = toListParams(options);
    return decodeListedRows(await this.selectAll(selectListDeliveries(options), params), ascending);
  }

  async retryNow(id: number, now: number): Promise<boolean> {
    return (await this.execute(queries.deliveries.retryNow, { id, now })) === 1;
  }

  async requeue(id: number, now: number): Promise<boolean> {
    return (await this.execute(queries.deliveries.requeue, { id, now })) === 1;
  }

  requeueAllDead(now: number): Promise<number> {
    return this.execute(queries.deliveries.requeueAllDead, { now });
  }

  expediteRetries(options: { now: number; until: number }): Promise<number> {
    return this.execute(queries.deliveries.expediteRetries, options);
  }

  pruneDeliveries(options: { state: 'sent' | 'dead'; before: number }): Promise<number> {
    return this.transaction(async (client) => {
      await runStatement(client, queries.deliveries.pruneSentMessages, options);
      await runStatement(client, queries.deliveries.pruneRouteMails, options);
      return (await runStatement(client, queries.deliveries.prune, options)).rowCount ?? 0;
    });
  }

  async countByState(): Promise<Record<DeliveryState, number>> {
    return decodeStateCounts(await this.selectAll(queries.deliveries.countByState, {}));
  }

  async oldestPendingAt(): Promise<number | null> {
    return (await this.selectAll(queries.deliveries.oldestPendingAt, {}))[0]?.t ?? null;
  }

  async nextDueAt(): Promise<number | null> {
    return (await this.selectAll(queries.deliveries.nextDueAt, {}))[0]?.t ?? null;
  }

  async saveReport(snapshot: ReportSnapshot): Promise<void> {
    await this.transaction(async (client) => {
      await runStatement(client, queries.reports.save, toReportParams(snapshot));
      await runStatement(client, queries.reports.forgetOldFailing, { series: snapshot.series });
    });
  }

  async findReport(dedupKey: string): Promise<ReportSnapshot | undefined> {
    const [row] = await this.selectAll(queries.reports.get, { dedupKey });
    return row && decodeReportRow(row);
  }

  async findReportBefore(series: string, before: ReportCursor, options: ReportReadOptions = {}): Promise<ReportSnapshot | undefined> {
    const statement = options.failingIds === false ? queries.reports.findBeforeWithoutIds : queries.reports.findBefore;
    const [row] = await this.selectAll(statement, { ...before, series });
    return row && decodeReportRow(row);
  }

  async listReportsBefore(series: string, before: ReportCursor, limit: number): Promise<ReportPoint[]> {
    if (limit <= 0) return [];
    const rows = await this.selectAll(queries.reports.listBefore, { ...before, series, limit });
    return rows.map(decodeReportPointRow).reverse();
  }

  async getDeliveryBody(id: number): Promise<Buffer | undefined> {
    return (await this.selectAll(queries.deliveries.getBody, { id }))[0]?.body;
  }

  async getSentMessage(deliveryId: number, route: string): Promise<SentMessage | undefined> {
    const [row] = await this.selectAll(queries.sentMessages.get, { deliveryId, route });
    return row && fromSentMessageRow(row);
  }

  async listSentMessages(deliveryId: number): Promise<SentMessage[]> {
    return (await this.selectAll(queries.sentMessages.ofDelivery, { deliveryId })).map(fromSentMessageRow);
  }

  async lastReportReceivedAt(source: string = DEFAULT_SOURCE_NAME): Promise<number | null> {
    return (await this.selectAll(queries.deliveries.lastReportReceivedAt, { source }))[0]?.t ?? null;
  }

  async getWatchdogState(now: number, source: string = DEFAULT_SOURCE_NAME): Promise<WatchdogState> {
    await this.execute(queries.watchdog.ensure, { now, source });
    return decodeWatchdogRow((await this.selectAll(queries.watchdog.get, { source }))[0]);
  }

  async transitionWatchdog(input: {
    expectedVersion: number;
    state: WatchdogStateName;
    since: number | null;
    now: number;
    alert: NewDelivery;
    source?: string;
  }): Promise<{ won: boolean; alertId?: number }> {
    const { alert, source = DEFAULT_SOURCE_NAME, ...rest } = input;
    const transition = { ...rest, source };
    return this.transaction(async (client) => {
      if ((await runStatement(client, queries.watchdog.transition, transition)).rowCount !== 1) return { won: false };
      const [result] = await insertDeliveries(client, [alert]);
      return { won: true, alertId: result.id };
    });
  }

  async lastDigestPeriod(route: string): Promise<DigestPeriod | undefined> {
    const [row] = await this.selectAll(queries.digests.last, { route });
    return row ? decodeDigestPeriodRow(row) : undefined;
  }

  async queueDigest(input: QueueDigestInput): Promise<QueuedDigest> {
    const { job, late, ...period } = input;
    // A replica inserting the same period at once waits for the first one's commit, then inserts nothing.
    return this.transaction(async (client) => {
      const inserted = await runStatement(client, queries.digests.insert, { ...period, late: late ? 1 : 0 });
      if (inserted.rowCount !== 1) return { queued: false, deliveryId: null };
      if (!job) return { queued: true, deliveryId: null };
      const [result] = await insertDeliveries(client, [job]);
      await runStatement(client, queries.digests.attach, { route: period.route, periodStart: period.periodStart, deliveryId: result.id });
      return { queued: true, deliveryId: result.id };
    });
  }

  async listDigestPeriods(options: { route?: string; limit?: number } = {}): Promise<DigestPeriod[]> {
    const limit = options.limit ?? 100;
    const rows =
      options.route === undefined
        ? await this.selectAll(queries.digests.list, { limit })
        : await this.selectAll(queries.digests.listOfRoute, { route: options.route, limit });
    return rows.map(decodeDigestPeriodRow);
  }

  async listRouteMails(deliveryIds: number[]): Promise<RouteMailRecord[]> {
    const ids = [...new Set(deliveryIds.filter((id) => Number.isSafeInteger(id)))];
    if (ids.length === 0) return [];
    return (await this.selectAll(queries.routeMails.ofDeliveries, { deliveryIds: ids })).map(decodeRouteMailRow);
  }

  async lastRouteMailCompletedAt(route: string, deliveryId: number): Promise<string | null> {
    return (
      (await this.selectAll(queries.routeMails.lastCompletedAt, { route, routeGroups: buildRouteGroupsPattern(route), deliveryId }))[0]
        ?.t ?? null
    );
  }

  async addWaiver(waiver: NewWaiver): Promise<Waiver> {
    return decodeWaiverRow((await this.selectAll(waiverQueries.insert, toWaiverParams(waiver)))[0]);
  }

  async getWaiver(id: string): Promise<Waiver | undefined> {
    const n = parseStoredWaiverId(id);
    const [row] = n === undefined ? [] : await this.selectAll(waiverQueries.get, { id: n });
    return row && decodeWaiverRow(row);
  }

  async listWaivers(filter: WaiverFilter): Promise<Waiver[]> {
    const { statement, params } = selectListWaivers(filter);
    return (await this.selectAll(statement, params)).map(decodeWaiverRow);
  }

  async expireWaiver(id: string, change: { now: number; by: string }): Promise<Waiver | undefined> {
    const n = parseStoredWaiverId(id);
    const [row] = n === undefined ? [] : await this.selectAll(waiverQueries.expire, { ...change, id: n });
    return row && decodeWaiverRow(row);
  }

  async countWaiversInForce(at: number): Promise<number> {
    return (await this.selectAll(waiverQueries.countInForce, { at }))[0].n;
  }

  async takeCatchUpLease(input: { source: string; owner: string; now: number; leaseMs: number }): Promise<CatchUpState | undefined> {
    const { leaseMs, ...lease } = input;
    const [row] = await this.selectAll(catchUpQueries.takeLease, { ...lease, until: input.now + leaseMs });
    return row && decodeCatchUpRow(row);
  }

  async finishCatchUp(input: { source: string; owner: string; now: number; seen?: ReportCursor }): Promise<void> {
    const { source, owner, now, seen } = input;
    if (seen) await this.execute(catchUpQueries.succeed, { source, owner, now, ...seen });
    else await this.execute(catchUpQueries.release, { source, owner });
  }

  async getCatchUpState(source: string): Promise<CatchUpState | undefined> {
    const [row] = await this.selectAll(catchUpQueries.get, { source });
    return row && decodeCatchUpRow(row);
  }

  async newestStoredReport(source: string): Promise<{ reportId: number; created: string } | undefined> {
    const [row] = await this.selectAll(catchUpQueries.newestStoredReport, { source });
    return row && { reportId: row.report_id, created: row.report_created };
  }

  async listStoredReportIds(source: string, afterId: number, uptoId: number): Promise<number[]> {
    const rows = await this.selectAll(catchUpQueries.storedReportIds, { source, afterId, uptoId });
    return rows.map((r) => r.report_id).sort((a, b) => a - b);
  }

  async findKnownKeys(keys: readonly string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    return (await this.selectAll(catchUpQueries.knownKeys, { keys: [...keys] })).map((r) => r.dedup_key);
  }

  async checkWritable(now: number): Promise<void> {
    await this.execute(queries.health.probe, { now });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Inserts already accepted are committed (or rejected) before the pool goes away.
    this.inserts.flush();
    await Promise.allSettled([...this.flushing]);
    this.closed = true;
    await this.pool.end();
  }

  /** The pool, for modules that keep their own tables in the same database. */
  get database(): pg.Pool {
    return this.pool;
  }
}

/**
 * Inserts deliveries in one statement (a key repeated in the batch, or already stored, is not
 * inserted again) and looks up the ids of those that were already there.
 */
async function insertDeliveries(queryable: Queryable, deliveries: NewDelivery[]): Promise<InsertResult[]> {
  const inserted = await runStatement(queryable, buildInsertDeliveries(deliveries.length), toInsertParams(deliveries));
  const missing = findMissingKeys(deliveries, inserted.rows);
  const existing = missing.length > 0 ? (await runStatement(queryable, queries.deliveries.findIdsByKey, { keys: missing })).rows : [];
  const results = resolveInsertResults(deliveries, inserted.rows, existing);
  const arrivals = deliveries.flatMap((d, i) => (!results[i].duplicate && hasArrival(d) ? [toArrivalParams(d.report, d.series)] : []));
  if (arrivals.length > 0) await runStatement(queryable, buildArriveReports(arrivals.length), toArrivalsParams(arrivals));
  return results;
}

/** The pool, or one connection checked out of it (inside a transaction). */
type Queryable = pg.Pool | pg.PoolClient;

/** Runs a statement of queries.ts with PostgreSQL's placeholders. */
async function runStatement<P extends object, R>(
  queryable: Queryable,
  statement: Statement<P, R>,
  params: P,
): Promise<{ rows: R[]; rowCount: number | null }> {
  const result = await queryable.query(statement.compile(POSTGRES_DIALECT).text, statement.bind(POSTGRES_DIALECT, params));
  return { rows: result.rows as R[], rowCount: result.rowCount };
}

/**
 * SQLSTATE classes that are the query's own fault (bad data, constraint, syntax): a retry cannot
 * help, so they stay as they are. Everything else — refused or dropped connections, timeouts,
 * "the database system is shutting down" (57P01), read-only standby (25006), disk full (53100),
 * serialization failures — means "cannot commit now": 503, retry later.
 */
const PROGRAMMING_ERROR_CLASSES = new Set(['22', '23', '42', '2B', '2D', '3F', '44']);

/** Maps a pg or socket error to {@link StorageUnavailableError} unless a retry cannot help. */
export function toStorageError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && PROGRAMMING_ERROR_CLASSES.has(code.slice(0, 2))) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StorageUnavailableError(`the outbox cannot commit: ${message}`, typeof code === 'string' ? `PG_${code}` : 'PG_UNAVAILABLE', {
    cause: error,
  });
}

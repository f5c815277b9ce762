import pg from 'pg';
import type { ReportSnapshot } from '../trend';
import { PG_MIGRATIONS, type PgMigration } from './migrations/pg';
import { DELIVERY_RECORD_COLUMNS, decodeDeliveryRow, type DeliveryRow } from './delivery-rows';
import { decodeRouteMailRow, type RouteMailRow } from './route-mail-rows';
import { fromSentMessageRow, SENT_MESSAGE_COLUMNS, toSentMessageParams, type SentMessageRow } from './sent-message-rows';
import { decodeReportRow, encodeFailingPairs, type ReportRow } from './report-rows';
import {
  DELIVERY_STATES,
  REPORT_FAILING_SETS_KEPT,
  StorageUnavailableError,
  type ClaimedDelivery,
  type DeliveryRecord,
  type DeliveryState,
  type InsertResult,
  type ListOptions,
  type MigrationReport,
  type NewDelivery,
  type NewRouteMail,
  type RouteMailRecord,
  type RouteMailState,
  type Store,
  WATCHDOG_KEY_PREFIX,
  type WatchdogState,
  type WatchdogStateName,
  type SentMessage,
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

/** Rows per multi-row INSERT: 9 parameters each stays far below PostgreSQL's 65535. */
const INSERT_CHUNK = 1000;



interface PendingInsert {
  delivery: NewDelivery;
  resolve: (result: InsertResult) => void;
  reject: (error: unknown) => void;
}

/** BIGINT (epoch milliseconds, ids, counts) as numbers: every value we store fits in 2^53. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

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
  private pending: PendingInsert[] = [];
  private flushScheduled = false;
  private flushing = new Set<Promise<void>>();
  private closed = false;
  /** Migrations run once, before the first statement; a failure (database down) is retried on the next call. */
  private ready: Promise<MigrationReport> | undefined;
  private readonly onIdleError: ((error: Error) => void) | undefined;

  constructor(options: PgStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: options.statementTimeoutMs ?? 15_000,
      // The client-side bound also covers a server that vanished without closing the socket.
      query_timeout: (options.statementTimeoutMs ?? 15_000) + 5_000,
      application_name: 'compliance-relay',
      types: TYPES,
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
   */
  private async checkout(): Promise<{ client: pg.PoolClient; release: (broken: boolean) => void }> {
    const client = await this.pool.connect();
    let lost = false;
    const onError = (error: Error) => {
      lost = true;
      this.onIdleError?.(error);
    };
    client.on('error', onError);
    return {
      client,
      release: (broken) => {
        client.off('error', onError);
        client.release(broken || lost);
      },
    };
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

  /** Runs one statement after the migrations, mapping connection and server failures to 503s. */
  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new StorageUnavailableError('the store is closed', 'STORE_CLOSED');
    await this.migrate();
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw toStorageError(error);
    }
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
      this.pending.push({ delivery, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.startFlush());
      }
    });
  }

  private startFlush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const done = this.flush(batch).finally(() => this.flushing.delete(done));
    this.flushing.add(done);
  }

  /** Commits a batch of inserts (one statement per chunk) and settles each caller's promise. */
  private async flush(batch: PendingInsert[]): Promise<void> {
    for (let start = 0; start < batch.length; start += INSERT_CHUNK) {
      const chunk = batch.slice(start, start + INSERT_CHUNK);
      try {
        const results = await this.insertChunk(chunk.map((p) => p.delivery));
        chunk.forEach((p, i) => p.resolve(results[i]!));
      } catch (error) {
        for (const p of chunk) p.reject(error);
      }
    }
  }

  private async insertChunk(deliveries: NewDelivery[]): Promise<InsertResult[]> {
    const params: unknown[] = [];
    const values = deliveries.map((d) => {
      const at = params.length;
      params.push(d.dedupKey, d.reportId, d.reportCreated, d.completedAt, d.source, d.body, d.receivedAt);
      const p = (i: number) => `$${at + i}`;
      return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, 'queued', 0, ${p(7)}, ${p(7)})`;
    });
    // DO NOTHING (not DO UPDATE) tolerates the same key twice in one statement, and waits for a
    // concurrent insert of the same key by another replica to commit before deciding.
    const inserted = await this.query<{ id: number; dedup_key: string }>(
      `INSERT INTO deliveries (dedup_key, report_id, report_created, completed_at, source, body, received_at, state, attempts,
         next_attempt_at, updated_at)
       VALUES ${values.join(', ')}
       ON CONFLICT (dedup_key) DO NOTHING RETURNING id, dedup_key`,
      params,
    );
    const fresh = new Map(inserted.rows.map((r) => [r.dedup_key, r.id]));
    const missing = [...new Set(deliveries.map((d) => d.dedupKey).filter((k) => !fresh.has(k)))];
    const existing = new Map<string, number>();
    if (missing.length > 0) {
      const found = await this.query<{ id: number; dedup_key: string }>('SELECT id, dedup_key FROM deliveries WHERE dedup_key = ANY($1)', [missing]);
      for (const r of found.rows) existing.set(r.dedup_key, r.id);
    }
    return deliveries.map((d) => {
      const id = fresh.get(d.dedupKey);
      if (id !== undefined) {
        // Only the first occurrence in the batch is new; later ones are duplicates of it.
        fresh.delete(d.dedupKey);
        existing.set(d.dedupKey, id);
        return { id, duplicate: false };
      }
      const found = existing.get(d.dedupKey);
      if (found === undefined) {
        // Inserted by another replica and removed again before we looked: nothing durable to point at.
        throw new StorageUnavailableError(`delivery ${d.dedupKey} vanished while being stored`, 'STORE_RACE');
      }
      return { id: found, duplicate: true };
    });
  }

  async claimDue({ now, limit, owner, leaseMs }: { now: number; limit: number; owner: string; leaseMs: number }): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    // SKIP LOCKED: replicas claiming at the same moment each get different rows instead of waiting.
    const { rows } = await this.query<DeliveryRow>(
      `WITH due AS (
         SELECT id FROM deliveries
         WHERE (state IN ('queued', 'retrying') AND next_attempt_at <= $1) OR (state = 'sending' AND lease_until <= $1)
         ORDER BY id LIMIT $2
         FOR UPDATE SKIP LOCKED)
       UPDATE deliveries d SET state = 'sending', attempts = d.attempts + 1, lease_owner = $3, lease_until = $4, updated_at = $1
       FROM due WHERE d.id = due.id
       RETURNING ${prefixed('d', DELIVERY_RECORD_COLUMNS)}, d.body`,
      [now, limit, owner, now + leaseMs],
    );
    return rows.sort((a, b) => a.id - b.id).map((row) => ({ ...decodeDeliveryRow(row), body: row.body! }));
  }

  async extendLeases({ ids, owner, now, leaseMs }: { ids: number[]; owner: string; now: number; leaseMs: number }): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.query(`UPDATE deliveries SET lease_until = $1 WHERE state = 'sending' AND lease_owner = $2 AND id = ANY($3::bigint[])`, [now + leaseMs, owner, ids]);
    return result.rowCount ?? 0;
  }

  async markSent(id: number, { now, messageId }: { now: number; messageId: string }): Promise<void> {
    await this.query(
      `UPDATE deliveries SET state = 'sent', sent_at = $1, message_id = $2, next_attempt_at = NULL, lease_owner = NULL,
         lease_until = NULL, last_error = NULL, last_error_code = NULL, updated_at = $1 WHERE id = $3`,
      [now, messageId, id],
    );
  }

  async markRetry(id: number, { now, nextAttemptAt, error, code }: { now: number; nextAttemptAt: number; error: string; code: string }): Promise<void> {
    await this.query(
      `UPDATE deliveries SET state = 'retrying', next_attempt_at = $1, last_error = $2, last_error_code = $3, lease_owner = NULL,
         lease_until = NULL, updated_at = $4 WHERE id = $5`,
      [nextAttemptAt, error, code, now, id],
    );
  }

  async markDead(id: number, { now, error, code }: { now: number; error: string; code: string }): Promise<void> {
    await this.query(
      `UPDATE deliveries SET state = 'dead', next_attempt_at = NULL, last_error = $1, last_error_code = $2, lease_owner = NULL,
         lease_until = NULL, updated_at = $3 WHERE id = $4`,
      [error, code, now, id],
    );
  }

  async releaseLeases(now: number): Promise<number> {
    const result = await this.query(
      `UPDATE deliveries SET state = 'retrying', next_attempt_at = $1, lease_owner = NULL, lease_until = NULL, updated_at = $1
       WHERE state = 'sending'`,
      [now],
    );
    return result.rowCount ?? 0;
  }

  async getDelivery(id: number): Promise<DeliveryRecord | undefined> {
    const { rows } = await this.query<DeliveryRow>(`SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries WHERE id = $1`, [id]);
    return rows[0] ? decodeDeliveryRow(rows[0]) : undefined;
  }

  async listDeliveries(options: ListOptions = {}): Promise<DeliveryRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.state) {
      params.push(options.state);
      where.push(`state = $${params.length}`);
    }
    if (options.beforeId !== undefined) {
      params.push(options.beforeId);
      where.push(`id < $${params.length}`);
    }
    params.push(options.limit ?? 100);
    const sql = `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
    const { rows } = await this.query<DeliveryRow>(sql, params);
    return rows.map(decodeDeliveryRow);
  }

  async requeue(id: number, now: number): Promise<boolean> {
    const result = await this.query(
      `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = $1, lease_owner = NULL, lease_until = NULL,
         updated_at = $1 WHERE id = $2 AND state IN ('dead', 'sent')`,
      [now, id],
    );
    return result.rowCount === 1;
  }

  async requeueAllDead(now: number): Promise<number> {
    const result = await this.query(
      `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = $1, lease_owner = NULL, lease_until = NULL,
         updated_at = $1 WHERE state = 'dead'`,
      [now],
    );
    return result.rowCount ?? 0;
  }

  async pruneDeliveries({ state, before }: { state: 'sent' | 'dead'; before: number }): Promise<number> {
    const result = await this.query('DELETE FROM deliveries WHERE state = $1 AND updated_at < $2', [state, before]);
    return result.rowCount ?? 0;
  }

  async countByState(): Promise<Record<DeliveryState, number>> {
    const { rows } = await this.query<{ state: DeliveryState; n: number }>('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state');
    const counts = Object.fromEntries(DELIVERY_STATES.map((s) => [s, 0])) as Record<DeliveryState, number>;
    for (const row of rows) counts[row.state] = row.n;
    return counts;
  }

  async oldestPendingAt(): Promise<number | null> {
    const { rows } = await this.query<{ t: number | null }>(`SELECT MIN(received_at) AS t FROM deliveries WHERE state IN ('queued', 'sending', 'retrying')`);
    return rows[0]?.t ?? null;
  }

  async nextDueAt(): Promise<number | null> {
    const { rows } = await this.query<{ t: number | null }>(
      `SELECT LEAST(
         (SELECT MIN(next_attempt_at) FROM deliveries WHERE state IN ('queued', 'retrying')),
         (SELECT MIN(lease_until) FROM deliveries WHERE state = 'sending')) AS t`,
    );
    return rows[0]?.t ?? null;
  }

  async saveReport(snapshot: ReportSnapshot): Promise<void> {
    const c = snapshot.counts;
    await this.transaction(async (client) => {
      await client.query(
        `INSERT INTO reports (dedup_key, series, report_id, report_created, created_ms, total_passed, total_count, high_passed, high_count,
           middle_passed, middle_count, low_passed, low_count, failing, failing_count)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (dedup_key) DO UPDATE SET series = excluded.series, total_passed = excluded.total_passed,
           total_count = excluded.total_count, high_passed = excluded.high_passed, high_count = excluded.high_count,
           middle_passed = excluded.middle_passed, middle_count = excluded.middle_count, low_passed = excluded.low_passed,
           low_count = excluded.low_count, failing = COALESCE(excluded.failing, reports.failing),
           failing_count = COALESCE(excluded.failing_count, reports.failing_count)`,
        [
          snapshot.dedupKey, snapshot.series, snapshot.reportId, snapshot.created, snapshot.createdMs, c.totalPassed, c.totalCount,
          c.highPassed, c.highCount, c.middlePassed, c.middleCount, c.lowPassed, c.lowCount,
          encodeFailingPairs(snapshot.failing), snapshot.failing?.length ?? null,
        ],
      );
      // Bounded history: the newest failing sets of the series stay, older ones become unknown.
      await client.query(
        `UPDATE reports SET failing = NULL, failing_count = NULL
         WHERE series = $1 AND failing IS NOT NULL AND dedup_key NOT IN (
           SELECT dedup_key FROM reports WHERE series = $1 ORDER BY created_ms DESC, report_id DESC LIMIT $2)`,
        [snapshot.series, REPORT_FAILING_SETS_KEPT],
      );
    });
  }

  async findReportBefore(series: string, before: { createdMs: number; reportId: number }): Promise<ReportSnapshot | undefined> {
    const { rows } = await this.query<ReportRow>(
      `SELECT * FROM reports WHERE series = $1 AND (created_ms < $2 OR (created_ms = $2 AND report_id < $3))
       ORDER BY created_ms DESC, report_id DESC LIMIT 1`,
      [series, before.createdMs, before.reportId],
    );
    return rows[0] ? decodeReportRow(rows[0]) : undefined;
  }

  async getDeliveryBody(id: number): Promise<Buffer | undefined> {
    const { rows } = await this.query<{ body: Buffer }>('SELECT body FROM deliveries WHERE id = $1', [id]);
    return rows[0]?.body;
  }

  async saveSentMessage(deliveryId: number, message: SentMessage): Promise<void> {
    await this.query(
      `INSERT INTO sent_messages (delivery_id, ${SENT_MESSAGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (delivery_id) DO UPDATE SET raw = excluded.raw, envelope_from = excluded.envelope_from, envelope_to = excluded.envelope_to,
         subject = excluded.subject, text_part = excluded.text_part, html_part = excluded.html_part, response = excluded.response, sent_at = excluded.sent_at`,
      toSentMessageParams(deliveryId, message),
    );
  }

  async getSentMessage(deliveryId: number): Promise<SentMessage | undefined> {
    const { rows } = await this.query<SentMessageRow>(`SELECT ${SENT_MESSAGE_COLUMNS} FROM sent_messages WHERE delivery_id = $1`, [deliveryId]);
    return rows[0] ? fromSentMessageRow(rows[0]) : undefined;
  }

  async lastReportReceivedAt(): Promise<number | null> {
    const { rows } = await this.query<{ t: number | null }>('SELECT MAX(received_at) AS t FROM deliveries WHERE dedup_key NOT LIKE $1', [`${WATCHDOG_KEY_PREFIX}%`]);
    return rows[0]?.t ?? null;
  }

  async getWatchdogState(now: number): Promise<WatchdogState> {
    await this.query(`INSERT INTO watchdog_state (id, state, since, created_at, changed_at, version) VALUES (1, 'ok', NULL, $1, $1, 0) ON CONFLICT (id) DO NOTHING`, [now]);
    const { rows } = await this.query<{ state: WatchdogStateName; since: number | null; created_at: number; changed_at: number; version: number }>(
      'SELECT state, since, created_at, changed_at, version FROM watchdog_state WHERE id = 1',
    );
    const row = rows[0]!;
    return { state: row.state, since: row.since, createdAt: row.created_at, changedAt: row.changed_at, version: row.version };
  }

  async transitionWatchdog(input: { expectedVersion: number; state: WatchdogStateName; since: number | null; now: number; alert: NewDelivery }): Promise<{ won: boolean; alertId?: number }> {
    return this.transaction(async (client) => {
      // Under READ COMMITTED a concurrent UPDATE waits for the winner's commit, then finds the version moved.
      const updated = await client.query('UPDATE watchdog_state SET state = $1, since = $2, changed_at = $3, version = version + 1 WHERE id = 1 AND version = $4', [
        input.state,
        input.since,
        input.now,
        input.expectedVersion,
      ]);
      if (updated.rowCount !== 1) return { won: false };
      const a = input.alert;
      const inserted = await client.query<{ id: number }>(
        `INSERT INTO deliveries (dedup_key, report_id, report_created, completed_at, source, body, received_at, state, attempts, next_attempt_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', 0, $7, $7) ON CONFLICT (dedup_key) DO NOTHING RETURNING id`,
        [a.dedupKey, a.reportId, a.reportCreated, a.completedAt, a.source, a.body, a.receivedAt],
      );
      const id = inserted.rows[0]?.id ?? (await client.query<{ id: number }>('SELECT id FROM deliveries WHERE dedup_key = $1', [a.dedupKey])).rows[0]?.id;
      return { won: true, alertId: id };
    });
  }

  async recordRouteDecisions(deliveryId: number, decisions: NewRouteMail[], now: number): Promise<RouteMailRecord[]> {
    return this.transaction(async (client) => {
      // ON CONFLICT DO NOTHING per row keeps the first replica's decisions when two decide at once;
      // the lock on the delivery row makes the whole set come from one of them.
      await client.query('SELECT id FROM deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
      const existing = await client.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM route_mails WHERE delivery_id = $1', [deliveryId]);
      if (existing.rows[0]!.n === 0) {
        for (const d of decisions) {
          const state: RouteMailState = d.outcome === 'send' ? 'pending' : d.outcome;
          await client.query(
            `INSERT INTO route_mails (delivery_id, route, position, outcome, reason, reminder, state, decided_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (delivery_id, route) DO NOTHING`,
            [deliveryId, d.route, d.position, d.outcome, d.reason, d.reminder, state, now],
          );
        }
      }
      const { rows } = await client.query<RouteMailRow>('SELECT * FROM route_mails WHERE delivery_id = $1 ORDER BY position', [deliveryId]);
      return rows.map(decodeRouteMailRow);
    });
  }

  async listRouteMails(deliveryIds: number[]): Promise<RouteMailRecord[]> {
    const ids = [...new Set(deliveryIds.filter((id) => Number.isSafeInteger(id)))];
    if (ids.length === 0) return [];
    const { rows } = await this.query<RouteMailRow>('SELECT * FROM route_mails WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id, position', [ids]);
    return rows.map(decodeRouteMailRow);
  }

  async markRouteMailSent(deliveryId: number, route: string, { now, messageId, response }: { now: number; messageId: string; response: string }): Promise<void> {
    await this.query(
      `UPDATE route_mails SET state = 'sent', message_id = $1, response = $2, sent_at = $3, last_error = NULL, last_error_code = NULL, updated_at = $3
       WHERE delivery_id = $4 AND route = $5`,
      [messageId, response, now, deliveryId, route],
    );
  }

  async markRouteMailFailed(deliveryId: number, route: string, { now, error, code, permanent }: { now: number; error: string; code: string; permanent: boolean }): Promise<void> {
    await this.query(
      `UPDATE route_mails SET state = $1, last_error = $2, last_error_code = $3, updated_at = $4 WHERE delivery_id = $5 AND route = $6 AND state <> 'sent'`,
      [permanent ? 'failed' : 'pending', error, code, now, deliveryId, route],
    );
  }

  async lastRouteMailCompletedAt(route: string, deliveryId: number): Promise<string | null> {
    const { rows } = await this.query<{ t: string }>(
      `SELECT d.completed_at AS t FROM route_mails r JOIN deliveries d ON d.id = r.delivery_id
       WHERE r.route = $1 AND r.outcome = 'send' AND r.delivery_id <> $2
         AND d.report_created <= (SELECT report_created FROM deliveries WHERE id = $2)
       ORDER BY d.report_created DESC, d.id DESC LIMIT 1`,
      [route, deliveryId],
    );
    return rows[0]?.t ?? null;
  }

  async checkWritable(now: number): Promise<void> {
    // A write, not a SELECT: a read-only standby or a full disk must fail the readiness check.
    await this.query('INSERT INTO health_probe (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at', [now]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Inserts already accepted are committed (or rejected) before the pool goes away.
    this.startFlush();
    await Promise.allSettled([...this.flushing]);
    this.closed = true;
    await this.pool.end();
  }

  /** The pool, for modules that keep their own tables in the same database. */
  get database(): pg.Pool {
    return this.pool;
  }
}




function prefixed(alias: string, columns: string): string {
  return columns
    .split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');
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
  return new StorageUnavailableError(`the outbox cannot commit: ${message}`, typeof code === 'string' ? `PG_${code}` : 'PG_UNAVAILABLE', { cause: error });
}

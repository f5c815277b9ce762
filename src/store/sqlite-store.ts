import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';
import { DELIVERY_RECORD_COLUMNS, decodeDeliveryRow, type DeliveryRow } from './delivery-rows';
import { decodeRouteMailRow, type RouteMailRow } from './route-mail-rows';
import {
  DELIVERY_STATES,
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
  REPORT_FAILING_SETS_KEPT,
  WATCHDOG_KEY_PREFIX,
  type WatchdogState,
  type WatchdogStateName,
  type SentMessage,
} from './types';
import type { ReportSnapshot } from '../trend';
import { decodeReportRow, encodeFailingPairs, type ReportRow } from './report-rows';
import { fromSentMessageRow, SENT_MESSAGE_COLUMNS, toSentMessageParams, type SentMessageRow } from './sent-message-rows';

export interface SqliteStoreOptions {
  /** Directory holding `relay.sqlite`; created when missing. */
  dataDir: string;
  /**
   * FULL (default): each commit is fsynced before its promise resolves (so before the 2xx): an
   * acknowledged delivery survives a process crash and a power loss. The fsync runs off the event
   * loop (see {@link SqliteStore}). NORMAL survives a process crash only (the WAL is synced at
   * checkpoints). EXTRA is SQLite's own FULL plus directory syncs, fsyncing on the event loop.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'EXTRA';
  /** How long a writer waits on a lock held by another connection before giving up (503). */
  busyTimeoutMs?: number;
  /** How the WAL is flushed to disk with synchronous=FULL (default `fs.fsync`); tests slow it down or fail it. */
  fsync?: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;
}

export const SQLITE_FILE_NAME = 'relay.sqlite';

/**
 * WAL fsyncs running at once (synchronous=FULL). More than one lets a commit start its own flush
 * instead of waiting behind one that began before it; libuv's pool has four threads by default.
 */
const MAX_SYNCS_IN_FLIGHT = 2;

interface PendingWrite {
  op: (db: Database.Database) => unknown;
  /**
   * One SQL statement: SQLite rolls a failed statement back by itself, so it needs no savepoint
   * of its own (a savepoint is two more statements per write).
   */
  single: boolean;
  resolve: (result: never) => void;
  reject: (error: unknown) => void;
}

/**
 * Prepared statements per connection: preparing compiles the SQL, which cost more than running
 * these one-row statements. Keyed by the connection, so a reopened file starts a fresh cache.
 */
const statementCache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

function prepareCached(db: Database.Database, sql: string): Database.Statement {
  let statements = statementCache.get(db);
  if (!statements) statementCache.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  return statement;
}

/**
 * The default store: one SQLite file in WAL mode, owned by one relay process.
 *
 * Writes on the hot paths are group-committed: every insert, claim and outcome (sent, retry, dead)
 * asked for in the same event-loop turn is written in one transaction, and each caller's promise
 * resolves only after that commit is on disk.
 *
 * Durability (synchronous=FULL) without blocking the event loop: better-sqlite3 is synchronous, so
 * SQLite's own FULL would fsync the WAL inside COMMIT, on the event loop, and stall every request
 * for the milliseconds a disk flush takes. Instead the connection runs with synchronous=NORMAL (a
 * commit only write()s its WAL frames; SQLite still syncs the WAL before each checkpoint and the
 * database after it) and the store fsyncs the WAL file itself on libuv's thread pool after the
 * commit. Each promise resolves only after an fsync that began after its commit, so everything a
 * caller could have observed (a row another request inserted, a claim) is durable when it learns
 * of it; batches committed while the fsyncs in flight run share the next one.
 * This is the durability of SQLite's FULL: a commit is acknowledged only once its WAL frames are
 * on stable storage.
 */
export class SqliteStore implements Store {
  /** One relay process owns the file: what is `sending` at its boot was interrupted. */
  readonly singleOwner = true;
  private db: Database.Database;
  private readonly file: string;
  private readonly options: Required<SqliteStoreOptions>;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private closed = false;
  /** Set after an I/O-level failure: the next call reopens the file before using it. */
  private needsReopen = false;
  /** Migrations applied when this store opened the file. */
  private readonly migrationsApplied: string[] = [];
  /** synchronous=FULL: the store fsyncs the WAL after commits (off the event loop). */
  private readonly syncsWal: boolean;
  /** The WAL file, opened on the first sync of a connection (SQLite creates it on the first write). */
  private walFd: number | undefined;
  /** Callbacks of commits waiting for a WAL fsync to start; `syncsInFlight` fsyncs are running. */
  private awaitingSync: ((error?: unknown) => void)[] = [];
  private syncsInFlight = 0;

  private constructor(options: SqliteStoreOptions) {
    this.options = { synchronous: 'FULL', busyTimeoutMs: 200, fsync: fs.fsync, ...options };
    this.syncsWal = this.options.synchronous === 'FULL';
    this.file = path.join(options.dataDir, SQLITE_FILE_NAME);
    try {
      this.db = this.openDatabase();
    } catch (error) {
      // A data dir that is read-only or full right now must not stop the relay: it answers 503 and
      // opens the file on the next call that finds the storage usable again.
      if (!(toStorageError(error) instanceof StorageUnavailableError)) throw error;
      this.db = new Database(':memory:');
      this.needsReopen = true;
    }
  }

  /** Opens (creating and migrating when needed) the store under `dataDir`. */
  static open(options: SqliteStoreOptions): SqliteStore {
    fs.mkdirSync(options.dataDir, { recursive: true });
    return new SqliteStore(options);
  }

  private openDatabase(): Database.Database {
    const db = new Database(this.file);
    try {
      db.pragma('journal_mode = WAL');
      // FULL is kept by fsyncing the WAL off the event loop after each commit (see the class comment).
      db.pragma(`synchronous = ${this.syncsWal ? 'NORMAL' : this.options.synchronous}`);
      db.pragma(`busy_timeout = ${this.options.busyTimeoutMs}`);
      this.migrationsApplied.push(...migrate(db));
      return db;
    } catch (error) {
      // A half-opened handle would keep the file (and its volume) busy after every failed attempt.
      db.close();
      throw error;
    }
  }

  /**
   * Runs `fn` on the connection, turning SQLite's I/O, lock and space errors into
   * StorageUnavailableError. A failed connection is reopened on the next call, so the store recovers
   * by itself once the disk is writable again.
   */
  private run<T>(fn: (db: Database.Database) => T): T {
    if (this.closed) throw new StorageUnavailableError('the store is closed', 'STORE_CLOSED');
    try {
      if (this.needsReopen) {
        this.db.close();
        this.closeWal();
        this.db = this.openDatabase();
        this.needsReopen = false;
      }
      return fn(this.db);
    } catch (error) {
      const mapped = toStorageError(error);
      // A read-only or vanished file can keep failing on the same handle; busy and full cannot.
      if (mapped instanceof StorageUnavailableError && /^SQLITE_(READONLY|IOERR|CANTOPEN|CORRUPT|NOTADB)/.test(mapped.code)) {
        this.needsReopen = true;
      }
      throw mapped;
    }
  }

  /** SQLite migrates when the file is opened; this reports what that did. */
  async migrate(): Promise<MigrationReport> {
    return { applied: [...this.migrationsApplied], version: Math.max(0, ...SQLITE_MIGRATIONS.map((m) => m.version)) };
  }

  insertDelivery(delivery: NewDelivery): Promise<InsertResult> {
    return this.queueWrite((db) => insertOne(db, delivery), { single: true });
  }

  /**
   * Queues a write for the next group commit (at most one event-loop turn away). A write that fails
   * on its own (a constraint) rejects alone: a single statement is rolled back by SQLite, a write of
   * several runs in its own savepoint. A storage error (I/O, full, locked) rejects the whole batch,
   * since nothing of it was committed.
   */
  private queueWrite<T>(op: (db: Database.Database) => T, { single = false }: { single?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new StorageUnavailableError('the store is closed', 'STORE_CLOSED'));
        return;
      }
      this.pending.push({ op, single, resolve: resolve as (result: never) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every pending write in one transaction; the promises settle once it is on disk. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    let settled: ({ value: unknown } | { error: unknown })[];
    try {
      settled = this.run((db) => runBatch(db, batch));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    this.afterCommit((syncError) => {
      batch.forEach((p, i) => {
        const outcome = settled[i]!;
        if (syncError) p.reject(syncError);
        else if ('error' in outcome) p.reject(outcome.error);
        else p.resolve(outcome.value as never);
      });
    });
  }

  /** Runs a write outside the group commit and resolves once it is on disk. */
  private async runDurably<T>(fn: (db: Database.Database) => T): Promise<T> {
    const value = this.run(fn);
    await this.synced();
    return value;
  }

  /** Resolves once everything committed so far is on disk; rejects as storage unavailable if it cannot be. */
  private synced(): Promise<void> {
    return new Promise((resolve, reject) => this.afterCommit((error) => (error ? reject(error) : resolve())));
  }

  /**
   * Calls `done` once what has been committed so far is on stable storage: at once unless this
   * store syncs the WAL itself, otherwise after an fsync of the WAL file that started after the
   * commit, run on libuv's thread pool while the event loop goes on. Up to
   * {@link MAX_SYNCS_IN_FLIGHT} run at once, so a commit never waits for an fsync that began before
   * it; beyond that, commits wait and share the next one.
   */
  private afterCommit(done: (error?: unknown) => void): void {
    if (!this.syncsWal) {
      done();
      return;
    }
    this.awaitingSync.push(done);
    this.startSync();
  }

  private startSync(): void {
    if (this.syncsInFlight >= MAX_SYNCS_IN_FLIGHT || this.awaitingSync.length === 0) return;
    const group = this.awaitingSync;
    this.awaitingSync = [];
    // After a failed fsync the kernel may have dropped the dirty pages: start over from the file.
    const fail = (error: Error) => {
      this.needsReopen = true;
      const failure = new StorageUnavailableError(`the outbox cannot sync its journal: ${error.message}`, 'WAL_SYNC_FAILED', { cause: error });
      for (const done of group) done(failure);
    };
    let fd: number;
    try {
      fd = this.openWal();
    } catch (error) {
      fail(error as Error);
      return;
    }
    this.syncsInFlight += 1;
    this.options.fsync(fd, (error) => {
      this.syncsInFlight -= 1;
      if (error) fail(error);
      else for (const done of group) done();
      this.startSync();
    });
  }

  /**
   * The WAL file's descriptor. The WAL keeps its inode while this connection is open (SQLite
   * deletes it only when the last connection closes), so one descriptor serves until a reopen. The
   * directory is synced once too, as SQLite does for a journal it created.
   */
  private openWal(): number {
    if (this.walFd === undefined) {
      this.walFd = fs.openSync(`${this.file}-wal`, 'r');
      const dirFd = fs.openSync(path.dirname(this.file), 'r');
      try {
        fs.fsyncSync(dirFd);
      } finally {
        fs.closeSync(dirFd);
      }
    }
    return this.walFd;
  }

  private closeWal(): void {
    if (this.walFd === undefined) return;
    try {
      fs.closeSync(this.walFd);
    } catch {
      // Already gone with its volume: nothing to release.
    }
    this.walFd = undefined;
  }

  async claimDue({ now, limit, owner, leaseMs }: { now: number; limit: number; owner: string; leaseMs: number }): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const rows = await this.queueWrite((db) =>
      prepareCached(
        db,
          `UPDATE deliveries SET state = 'sending', attempts = attempts + 1, lease_owner = ?, lease_until = ?, updated_at = ?
           WHERE id IN (
             SELECT id FROM deliveries
             WHERE (state IN ('queued', 'retrying') AND next_attempt_at <= ?) OR (state = 'sending' AND lease_until <= ?)
             ORDER BY id LIMIT ?)
           RETURNING ${DELIVERY_RECORD_COLUMNS}, body`,
        )
        .all(owner, now + leaseMs, now, now, now, limit) as DeliveryRow[],
      { single: true },
    );
    return rows.sort((a, b) => a.id - b.id).map((row) => ({ ...decodeDeliveryRow(row), body: row.body! }));
  }

  async extendLeases({ ids, owner, now, leaseMs }: { ids: number[]; owner: string; now: number; leaseMs: number }): Promise<number> {
    if (ids.length === 0) return 0;
    return this.queueWrite(
      (db) =>
        prepareCached(db, `UPDATE deliveries SET lease_until = ? WHERE state = 'sending' AND lease_owner = ? AND id IN (SELECT value FROM json_each(?))`).run(
          now + leaseMs,
          owner,
          JSON.stringify(ids),
        ).changes,
      { single: true },
    );
  }

  async markSent(id: number, { now, messageId }: { now: number; messageId: string }): Promise<void> {
    await this.queueWrite((db) =>
      prepareCached(
        db,
          `UPDATE deliveries SET state = 'sent', sent_at = ?, message_id = ?, next_attempt_at = NULL, lease_owner = NULL,
             lease_until = NULL, last_error = NULL, last_error_code = NULL, updated_at = ? WHERE id = ?`,
        )
        .run(now, messageId, now, id),
      { single: true },
    );
  }

  async markRetry(id: number, { now, nextAttemptAt, error, code }: { now: number; nextAttemptAt: number; error: string; code: string }): Promise<void> {
    await this.queueWrite((db) =>
      prepareCached(
        db,
          `UPDATE deliveries SET state = 'retrying', next_attempt_at = ?, last_error = ?, last_error_code = ?, lease_owner = NULL,
             lease_until = NULL, updated_at = ? WHERE id = ?`,
        )
        .run(nextAttemptAt, error, code, now, id),
      { single: true },
    );
  }

  async markDead(id: number, { now, error, code }: { now: number; error: string; code: string }): Promise<void> {
    await this.queueWrite((db) =>
      prepareCached(
        db,
          `UPDATE deliveries SET state = 'dead', next_attempt_at = NULL, last_error = ?, last_error_code = ?, lease_owner = NULL,
             lease_until = NULL, updated_at = ? WHERE id = ?`,
        )
        .run(error, code, now, id),
      { single: true },
    );
  }

  async releaseLeases(now: number): Promise<number> {
    return this.runDurably(
      (db) =>
        prepareCached(
          db,
          `UPDATE deliveries SET state = 'retrying', next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
           WHERE state = 'sending'`,
        )
          .run(now, now).changes,
    );
  }

  async getDelivery(id: number): Promise<DeliveryRecord | undefined> {
    const row = this.run((db) => prepareCached(db, `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries WHERE id = ?`).get(id) as DeliveryRow | undefined);
    return row ? decodeDeliveryRow(row) : undefined;
  }

  async listDeliveries(options: ListOptions = {}): Promise<DeliveryRecord[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (options.state) {
      where.push('state = ?');
      params.push(options.state);
    }
    if (options.beforeId !== undefined) {
      where.push('id < ?');
      params.push(options.beforeId);
    }
    const sql = `SELECT ${DELIVERY_RECORD_COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    const rows = this.run((db) => prepareCached(db, sql).all(...params, options.limit ?? 100) as DeliveryRow[]);
    return rows.map(decodeDeliveryRow);
  }

  async requeue(id: number, now: number): Promise<boolean> {
    return this.runDurably(
      (db) =>
        prepareCached(
          db,
          `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
             updated_at = ? WHERE id = ? AND state IN ('dead', 'sent')`,
        )
          .run(now, now, id).changes === 1,
    );
  }

  async requeueAllDead(now: number): Promise<number> {
    return this.runDurably(
      (db) =>
        prepareCached(
          db,
          `UPDATE deliveries SET state = 'queued', attempts = 0, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
             updated_at = ? WHERE state = 'dead'`,
        )
          .run(now, now).changes,
    );
  }

  async countByState(): Promise<Record<DeliveryState, number>> {
    const rows = this.run((db) => prepareCached(db, 'SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state').all() as { state: DeliveryState; n: number }[]);
    const counts = Object.fromEntries(DELIVERY_STATES.map((s) => [s, 0])) as Record<DeliveryState, number>;
    for (const row of rows) counts[row.state] = row.n;
    return counts;
  }

  async pruneDeliveries({ state, before }: { state: 'sent' | 'dead'; before: number }): Promise<number> {
    return this.runDurably((db) => db.prepare('DELETE FROM deliveries WHERE state = ? AND updated_at < ?').run(state, before).changes);
  }

  async oldestPendingAt(): Promise<number | null> {
    const row = this.run(
      (db) => prepareCached(db, `SELECT MIN(received_at) AS t FROM deliveries WHERE state IN ('queued', 'sending', 'retrying')`).get() as { t: number | null },
    );
    return row.t;
  }

  async nextDueAt(): Promise<number | null> {
    const row = this.run(
      (db) =>
        prepareCached(
          db,
          `SELECT MIN(t) AS t FROM (
             SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE state IN ('queued', 'retrying')
             UNION ALL SELECT MIN(lease_until) FROM deliveries WHERE state = 'sending')`,
        )
          .get() as { t: number | null },
    );
    return row.t;
  }

  async saveReport(snapshot: ReportSnapshot): Promise<void> {
    const c = snapshot.counts;
    await this.runDurably((db) =>
      db.transaction(() => {
        prepareCached(
          db,
          `INSERT INTO reports (dedup_key, series, report_id, report_created, created_ms, total_passed, total_count, high_passed, high_count,
             middle_passed, middle_count, low_passed, low_count, failing, failing_count)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (dedup_key) DO UPDATE SET series = excluded.series, total_passed = excluded.total_passed,
             total_count = excluded.total_count, high_passed = excluded.high_passed, high_count = excluded.high_count,
             middle_passed = excluded.middle_passed, middle_count = excluded.middle_count, low_passed = excluded.low_passed,
             low_count = excluded.low_count, failing = COALESCE(excluded.failing, reports.failing),
             failing_count = COALESCE(excluded.failing_count, reports.failing_count)`,
        ).run(
          snapshot.dedupKey, snapshot.series, snapshot.reportId, snapshot.created, snapshot.createdMs, c.totalPassed, c.totalCount,
          c.highPassed, c.highCount, c.middlePassed, c.middleCount, c.lowPassed, c.lowCount,
          encodeFailingPairs(snapshot.failing), snapshot.failing?.length ?? null,
        );
        // Bounded history: the newest failing sets of the series stay, older ones become unknown.
        prepareCached(
          db,
          `UPDATE reports SET failing = NULL, failing_count = NULL
           WHERE series = ? AND failing IS NOT NULL AND dedup_key NOT IN (
             SELECT dedup_key FROM reports WHERE series = ? ORDER BY created_ms DESC, report_id DESC LIMIT ?)`,
        ).run(snapshot.series, snapshot.series, REPORT_FAILING_SETS_KEPT);
      })(),
    );
  }

  async findReportBefore(series: string, before: { createdMs: number; reportId: number }): Promise<ReportSnapshot | undefined> {
    const row = this.run(
      (db) =>
        prepareCached(
          db,
          `SELECT * FROM reports WHERE series = ? AND (created_ms < ? OR (created_ms = ? AND report_id < ?))
           ORDER BY created_ms DESC, report_id DESC LIMIT 1`,
        )
          .get(series, before.createdMs, before.createdMs, before.reportId) as ReportRow | undefined,
    );
    return row ? decodeReportRow(row) : undefined;
  }

  async getDeliveryBody(id: number): Promise<Buffer | undefined> {
    const row = this.run((db) => db.prepare('SELECT body FROM deliveries WHERE id = ?').get(id) as { body: Buffer } | undefined);
    return row?.body;
  }

  async saveSentMessage(deliveryId: number, message: SentMessage): Promise<void> {
    await this.runDurably((db) =>
      db
        .prepare(
          `INSERT INTO sent_messages (delivery_id, ${SENT_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (delivery_id) DO UPDATE SET raw = excluded.raw, envelope_from = excluded.envelope_from, envelope_to = excluded.envelope_to,
             subject = excluded.subject, text_part = excluded.text_part, html_part = excluded.html_part, response = excluded.response, sent_at = excluded.sent_at`,
        )
        .run(...toSentMessageParams(deliveryId, message)),
    );
  }

  async getSentMessage(deliveryId: number): Promise<SentMessage | undefined> {
    const row = this.run((db) => db.prepare(`SELECT ${SENT_MESSAGE_COLUMNS} FROM sent_messages WHERE delivery_id = ?`).get(deliveryId) as SentMessageRow | undefined);
    return row ? fromSentMessageRow(row) : undefined;
  }

  async lastReportReceivedAt(): Promise<number | null> {
    const row = this.run(
      (db) => db.prepare(`SELECT MAX(received_at) AS t FROM deliveries WHERE dedup_key NOT LIKE ?`).get(`${WATCHDOG_KEY_PREFIX}%`) as { t: number | null },
    );
    return row.t;
  }

  async getWatchdogState(now: number): Promise<WatchdogState> {
    return this.run((db) => {
      db.prepare(`INSERT INTO watchdog_state (id, state, since, created_at, changed_at, version) VALUES (1, 'ok', NULL, ?, ?, 0) ON CONFLICT (id) DO NOTHING`).run(now, now);
      const row = db.prepare('SELECT state, since, created_at, changed_at, version FROM watchdog_state WHERE id = 1').get() as {
        state: WatchdogStateName;
        since: number | null;
        created_at: number;
        changed_at: number;
        version: number;
      };
      return { state: row.state, since: row.since, createdAt: row.created_at, changedAt: row.changed_at, version: row.version };
    });
  }

  async transitionWatchdog(input: { expectedVersion: number; state: WatchdogStateName; since: number | null; now: number; alert: NewDelivery }): Promise<{ won: boolean; alertId?: number }> {
    return this.runDurably((db) =>
      db.transaction(() => {
        const changed = db
          .prepare('UPDATE watchdog_state SET state = ?, since = ?, changed_at = ?, version = version + 1 WHERE id = 1 AND version = ?')
          .run(input.state, input.since, input.now, input.expectedVersion).changes;
        if (changed !== 1) return { won: false };
        const inserted = insertOne(db, input.alert);
        return { won: true, alertId: inserted.id };
      })(),
    );
  }

  async recordRouteDecisions(deliveryId: number, decisions: NewRouteMail[], now: number): Promise<RouteMailRecord[]> {
    return this.queueWrite((db) => {
      const existing = prepareCached(db, 'SELECT COUNT(*) AS n FROM route_mails WHERE delivery_id = ?').get(deliveryId) as { n: number };
      if (existing.n === 0) {
        const insert = prepareCached(
          db,
          `INSERT INTO route_mails (delivery_id, route, position, outcome, reason, reminder, state, decided_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const d of decisions) {
          const state: RouteMailState = d.outcome === 'send' ? 'pending' : d.outcome;
          insert.run(deliveryId, d.route, d.position, d.outcome, d.reason, d.reminder ? 1 : 0, state, now, now);
        }
      }
      return (prepareCached(db, 'SELECT * FROM route_mails WHERE delivery_id = ? ORDER BY position').all(deliveryId) as RouteMailRow[]).map(decodeRouteMailRow);
    });
  }

  async listRouteMails(deliveryIds: number[]): Promise<RouteMailRecord[]> {
    if (deliveryIds.length === 0) return [];
    const ids = [...new Set(deliveryIds.filter((id) => Number.isSafeInteger(id)))];
    const rows = this.run(
      (db) => db.prepare(`SELECT * FROM route_mails WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, position`).all(JSON.stringify(ids)) as RouteMailRow[],
    );
    return rows.map(decodeRouteMailRow);
  }

  async markRouteMailSent(deliveryId: number, route: string, { now, messageId, response }: { now: number; messageId: string; response: string }): Promise<void> {
    await this.queueWrite((db) =>
      prepareCached(
        db,
        `UPDATE route_mails SET state = 'sent', message_id = ?, response = ?, sent_at = ?, last_error = NULL, last_error_code = NULL, updated_at = ?
         WHERE delivery_id = ? AND route = ?`,
      ).run(messageId, response, now, now, deliveryId, route),
      { single: true },
    );
  }

  async markRouteMailFailed(deliveryId: number, route: string, { now, error, code, permanent }: { now: number; error: string; code: string; permanent: boolean }): Promise<void> {
    await this.queueWrite((db) =>
      prepareCached(db, `UPDATE route_mails SET state = ?, last_error = ?, last_error_code = ?, updated_at = ? WHERE delivery_id = ? AND route = ? AND state <> 'sent'`).run(
        permanent ? 'failed' : 'pending',
        error,
        code,
        now,
        deliveryId,
        route,
      ),
      { single: true },
    );
  }

  async lastRouteMailCompletedAt(route: string, deliveryId: number): Promise<string | null> {
    const row = this.run(
      (db) =>
        db
          .prepare(
            `SELECT d.completed_at AS t FROM route_mails r JOIN deliveries d ON d.id = r.delivery_id
             WHERE r.route = ? AND r.outcome = 'send' AND r.delivery_id <> ?
               AND d.report_created <= (SELECT report_created FROM deliveries WHERE id = ?)
             ORDER BY d.report_created DESC, d.id DESC LIMIT 1`,
          )
          .get(route, deliveryId, deliveryId) as { t: string } | undefined,
    );
    return row?.t ?? null;
  }

  async checkWritable(now: number): Promise<void> {
    this.run((db) => prepareCached(db, 'INSERT INTO health_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at').run(now));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    // Whatever is syncing settles before the file closes (a failure rejects those callers, not close).
    if (this.syncsInFlight > 0 || this.awaitingSync.length > 0) await this.synced().catch(() => undefined);
    if (this.closed) return;
    this.closed = true;
    this.db.close();
    this.closeWal();
  }

  /** The underlying connection, for modules that keep their own tables in the same file. */
  get database(): Database.Database {
    return this.db;
  }
}

/** Runs one write in a savepoint (a transaction nested in the batch's); one function per connection. */
const savepointRunners = new WeakMap<Database.Database, (op: (db: Database.Database) => unknown, db: Database.Database) => unknown>();

/** Runs a batch of queued writes in one transaction; a write of several statements runs in its own savepoint. */
function runBatch(db: Database.Database, batch: PendingWrite[]): ({ value: unknown } | { error: unknown })[] {
  let inSavepoint = savepointRunners.get(db);
  if (!inSavepoint) savepointRunners.set(db, (inSavepoint = db.transaction((op: (db: Database.Database) => unknown, conn: Database.Database) => op(conn))));
  return db.transaction(() =>
    batch.map((p) => {
      try {
        return { value: p.single ? p.op(db) : inSavepoint(p.op, db) };
      } catch (error) {
        // Nothing of the batch can commit after an I/O error: fail it all (run() maps and reopens).
        if (toStorageError(error) instanceof StorageUnavailableError) throw error;
        return { error };
      }
    }),
  )();
}

function insertOne(db: Database.Database, d: NewDelivery): InsertResult {
  const row = prepareCached(
    db,
    `INSERT INTO deliveries (dedup_key, report_id, report_created, completed_at, source, body, received_at, state, attempts,
       next_attempt_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?)
     ON CONFLICT (dedup_key) DO NOTHING RETURNING id`,
  ).get(d.dedupKey, d.reportId, d.reportCreated, d.completedAt, d.source, d.body, d.receivedAt, d.receivedAt, d.receivedAt) as { id: number } | undefined;
  if (row) return { id: row.id, duplicate: false };
  const found = prepareCached(db, 'SELECT id FROM deliveries WHERE dedup_key = ?').get(d.dedupKey) as { id: number };
  return { id: found.id, duplicate: true };
}

/** Applies the pending migrations; returns their names. */
function migrate(db: Database.Database): string[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const applied: string[] = [];
  for (const migration of SQLITE_MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
    applied.push(`${String(migration.version).padStart(3, '0')}-${migration.name}`);
  }
  return applied;
}



/** SQLite result codes that mean "cannot commit now": the caller answers 503 and may retry. */
function toStorageError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) {
    return new StorageUnavailableError(`the outbox cannot commit: ${(error as Error).message}`, code, { cause: error });
  }
  return error;
}



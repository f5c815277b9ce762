import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';
import { reportMigrations, type Migration } from './migrations/common';
import { SQLITE_DIALECT } from './dialect';
import { TurnBatch, type Pending } from './turn-batch';
import { SqlStore, type StoreEngine } from './sql-store';
import type { Work } from './store-work';
import { StorageUnavailableError, storeClosedError } from './types';
import type { MigrationReport } from './types';

/** The better-sqlite3 driver, loaded by the first store opened: `--help` and `check-config` never load it. */
export function loadSqliteDriver(): typeof Database {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only when a SQLite file is opened
  return require('better-sqlite3') as typeof Database;
}

export interface SqliteStoreOptions {
  /** Directory holding `relay.sqlite`; created when missing. */
  dataDir: string;
  /**
   * FULL (default): each commit is fsynced (off the event loop) before its promise resolves, so an
   * acknowledged delivery survives a power loss. NORMAL survives a process crash only. EXTRA is SQLite's
   * own FULL plus directory syncs, fsyncing on the event loop.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'EXTRA';
  /** How the WAL is flushed with synchronous=FULL (default `fs.fsync`); tests slow it down or fail it. */
  fsync?: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;
}

export const SQLITE_FILE_NAME = 'relay.sqlite';

/**
 * WAL fsyncs running at once (synchronous=FULL). More than one lets a commit start its own flush
 * instead of waiting behind one that began before it; libuv's pool has four threads by default.
 */
const MAX_SYNCS_IN_FLIGHT = 2;

/** A grouped write; `single`: one SQL statement, which SQLite rolls back by itself, so it needs no savepoint. */
type GroupedWrite = { work: Work<unknown>; single: boolean };
type PendingWrite = Pending<GroupedWrite, unknown>;

/** Prepared statements per connection (preparing costs more than running these one-row statements). */
const statementCache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

function prepareCached(db: Database.Database, sql: string): Database.Statement {
  let statements = statementCache.get(db);
  if (!statements) statementCache.set(db, (statements = new Map<string, Database.Statement>()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  return statement;
}

/**
 * The default store's engine: one SQLite file in WAL mode, owned by one relay process. Hot-path writes
 * asked for in the same event-loop turn are group-committed in one transaction.
 *
 * Durability (synchronous=FULL) without blocking the event loop: SQLite's own FULL would fsync the WAL
 * inside COMMIT, on the event loop (better-sqlite3 is synchronous), stalling every request for a disk
 * flush. Instead the connection runs with synchronous=NORMAL (a commit only write()s its WAL frames;
 * SQLite still syncs around checkpoints) and the store fsyncs the WAL file on libuv's thread pool. Each
 * promise resolves only after an fsync that began after its commit, so everything a caller could have
 * observed (a row another request inserted, a claim) is durable when it learns of it: SQLite's FULL.
 */
class SqliteEngine implements StoreEngine {
  readonly singleOwner = true;
  db: Database.Database;
  private readonly file: string;
  private readonly options: Required<SqliteStoreOptions>;
  private readonly writes = new TurnBatch<GroupedWrite, unknown>((batch) => this.commitBatch(batch));
  private closed = false;
  /** Set after an I/O-level failure: the next call reopens the file before using it. */
  private needsReopen = false;
  private readonly migrationsApplied: Migration[] = [];
  /** synchronous=FULL: the store fsyncs the WAL itself. */
  private readonly syncsWal: boolean;
  /** Opened on the first sync of a connection (SQLite creates the WAL on the first write). */
  private walFd: number | undefined;
  /** Commits waiting for a WAL fsync to start. */
  private awaitingSync: ((error?: Error) => void)[] = [];
  private syncsInFlight = 0;
  /** Writes of earlier turns held while every fsync slot is busy (see commitBatch). */
  private heldWrites: PendingWrite[] = [];
  /** close() began: what is held commits now, without waiting for a free fsync slot. */
  private closing = false;

  constructor(options: SqliteStoreOptions) {
    this.options = { synchronous: 'FULL', fsync: fs.fsync, ...options };
    this.syncsWal = this.options.synchronous === 'FULL';
    this.file = path.join(options.dataDir, SQLITE_FILE_NAME);
    try {
      this.db = this.openDatabase();
    } catch (error) {
      // A data dir that is read-only or full right now must not stop the relay: it answers 503 and
      // opens the file on the next call that finds the storage usable again.
      if (!(toStorageError(error) instanceof StorageUnavailableError)) throw error;
      this.db = new (loadSqliteDriver())(':memory:');
      this.needsReopen = true;
    }
  }

  private openDatabase(): Database.Database {
    const db = new (loadSqliteDriver())(this.file);
    try {
      db.pragma('journal_mode = WAL');
      // FULL is kept by fsyncing the WAL off the event loop (see the class comment).
      db.pragma(`synchronous = ${this.syncsWal ? 'NORMAL' : this.options.synchronous}`);
      // How long a writer waits on another connection's lock before giving up (503).
      db.pragma('busy_timeout = 200');
      this.migrationsApplied.push(...migrate(db));
      return db;
    } catch (error) {
      // A half-opened handle would keep the file (and its volume) busy after every failed attempt.
      db.close();
      throw error;
    }
  }

  /** Runs `fn` on the connection; a failed connection is reopened on the next call, once the disk is usable again. */
  private run<T>(fn: (db: Database.Database) => T): T {
    if (this.closed) throw storeClosedError();
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

  async migrate(): Promise<MigrationReport> {
    return reportMigrations(SQLITE_MIGRATIONS, this.migrationsApplied);
  }

  async read<T>(work: Work<T>): Promise<T> {
    return this.run((db) => runWork(db, work));
  }

  async write<T>(work: Work<T>, { atomic }: { atomic: boolean }): Promise<T> {
    const value = this.run((db) => (atomic ? db.transaction(() => runWork(db, work))() : runWork(db, work)));
    await this.synced();
    return value;
  }

  /**
   * Queued for the next group commit (at most one event-loop turn away). A write that fails on its own
   * (a constraint) rejects alone: a single statement is rolled back by SQLite, an atomic one runs in its
   * own savepoint. A storage error (I/O, full, locked) rejects the whole batch: nothing of it committed.
   */
  writeGrouped<T>(work: Work<T>, { atomic }: { atomic: boolean }): Promise<T> {
    if (this.closed) return Promise.reject(storeClosedError());
    return this.writes.add({ work, single: !atomic }) as Promise<T>;
  }

  /**
   * Commits a turn's writes in one transaction; the promises settle once it is on disk. While
   * {@link MAX_SYNCS_IN_FLIGHT} WAL fsyncs run, a commit could not start its own and would wait for
   * one of them to end anyway: the writes are held until then and committed together with those of
   * the turns after them, one transaction instead of one per turn, at the same latency.
   */
  private commitBatch(turn: PendingWrite[]): void {
    this.heldWrites.push(...turn);
    if (this.syncsWal && this.syncsInFlight >= MAX_SYNCS_IN_FLIGHT && !this.closing) return;
    const batch = this.heldWrites;
    this.heldWrites = [];
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
        const outcome = settled[i];
        if (syncError) p.reject(syncError);
        else if ('error' in outcome) p.reject(outcome.error);
        else p.resolve(outcome.value);
      });
    });
  }

  /** Resolves once everything committed so far is on disk; rejects as storage unavailable if it cannot be. */
  private synced(): Promise<void> {
    return new Promise((resolve, reject) => this.afterCommit((error) => (error ? reject(error) : resolve())));
  }

  /**
   * Calls `done` once what has been committed so far is on stable storage: after an fsync of the WAL
   * that started after the commit. Beyond {@link MAX_SYNCS_IN_FLIGHT}, commits wait and share the next one.
   */
  private afterCommit(done: (error?: Error) => void): void {
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
      const failure = new StorageUnavailableError(`the outbox cannot sync its journal: ${error.message}`, 'WAL_SYNC_FAILED', {
        cause: error,
      });
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
      // A slot is free: the writes held meanwhile commit now and start their fsync.
      if (this.heldWrites.length > 0) this.commitBatch([]);
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    this.writes.flush();
    if (this.heldWrites.length > 0) this.commitBatch([]);
    // Whatever is syncing settles before the file closes (a failure rejects those callers, not close).
    if (this.syncsInFlight > 0 || this.awaitingSync.length > 0) await this.synced().catch(() => undefined);
    if (this.closed) return;
    this.closed = true;
    this.db.close();
    this.closeWal();
  }
}

/** The default store: one SQLite file (see {@link SqliteEngine}) under the logic of {@link SqlStore}. */
export class SqliteStore extends SqlStore<SqliteEngine> {
  static open(options: SqliteStoreOptions): SqliteStore {
    fs.mkdirSync(options.dataDir, { recursive: true });
    return new SqliteStore(new SqliteEngine(options));
  }

  get database(): Database.Database {
    return this.engine.db;
  }
}

/** Runs one write in a savepoint (a transaction nested in the batch's); one function per connection. */
const savepointRunners = new WeakMap<Database.Database, (work: Work<unknown>, db: Database.Database) => unknown>();

/** Runs a batch of queued writes in one transaction; a write of several statements runs in its own savepoint. */
function runBatch(db: Database.Database, batch: PendingWrite[]): ({ value: unknown } | { error: unknown })[] {
  let inSavepoint = savepointRunners.get(db);
  if (!inSavepoint)
    savepointRunners.set(db, (inSavepoint = db.transaction((work: Work<unknown>, conn: Database.Database) => runWork(conn, work))));
  return db.transaction(() =>
    batch.map((p) => {
      try {
        return { value: p.item.single ? runWork(db, p.item.work) : inSavepoint(p.item.work, db) };
      } catch (error) {
        // Nothing of the batch can commit after an I/O error: fail it all (run() maps and reopens).
        if (toStorageError(error) instanceof StorageUnavailableError) throw error;
        return { error };
      }
    }),
  )();
}

function runWork<T>(db: Database.Database, work: Work<T>): T {
  let step = work.next();
  while (!step.done) {
    const { statement, params, result } = step.value;
    const prepared = prepareCached(db, statement.compile(SQLITE_DIALECT).text);
    const values = statement.bind(SQLITE_DIALECT, params);
    step = work.next(
      result === 'rows' ? prepared.all(...values) : result === 'row' ? prepared.get(...values) : prepared.run(...values).changes,
    );
  }
  return step.value;
}

function migrate(db: Database.Database): Migration[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const pending = SQLITE_MIGRATIONS.filter((m) => m.version > current);
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
  return pending;
}

/** SQLite result codes that mean "cannot commit now": the caller answers 503 and may retry. */
function toStorageError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) {
    return new StorageUnavailableError(`the outbox cannot commit: ${(error as Error).message}`, code, { cause: error });
  }
  return error;
}

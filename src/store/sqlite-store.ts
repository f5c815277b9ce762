import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { reportMigrations, SQLITE_MIGRATIONS, type Migration, type MigrationReport } from './migrations';
import { SQLITE_DIALECT } from './statement';
import { TurnBatch, type Pending } from './turn-batch';
import { SqlStore } from './sql-store';
import type { Work } from './store-work';
import { StorageUnavailableError, storeClosedError } from './types';

/** The better-sqlite3 driver, loaded on first use: `--help` and `check-config` never load it. */
export function loadSqliteDriver(): typeof Database {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only when a SQLite file is opened
  return require('better-sqlite3') as typeof Database;
}

export interface SqliteStoreOptions {
  /** Created when missing. */
  dataDir: string;
  /**
   * FULL (default): each commit is fsynced off the event loop before it resolves (survives a power loss).
   * NORMAL survives a process crash only. EXTRA: SQLite's own FULL plus directory syncs, on the event loop.
   */
  sqliteSynchronous?: 'FULL' | 'NORMAL' | 'EXTRA';
  /** How the WAL is flushed with synchronous=FULL (default `fs.fsync`); tests slow it down or fail it. */
  fsync?: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;
}

export const SQLITE_FILE_NAME = 'relay.sqlite';

/** `single`: one SQL statement, which SQLite rolls back by itself, so it needs no savepoint. */
type PendingWrite = Pending<{ work: Work<unknown>; single: boolean }, unknown>;

/**
 * One SQLite file in WAL mode, owned by one process; a turn's writes are group-committed in one transaction.
 * SQLite's FULL would fsync inside COMMIT, on the event loop (better-sqlite3 is synchronous). So the
 * connection runs synchronous=NORMAL and the store fsyncs the WAL on libuv's thread pool; each promise
 * resolves only after an fsync begun after its commit, so whatever a caller saw is durable: FULL's guarantee.
 */
export class SqliteStore extends SqlStore {
  readonly singleOwner = true;
  private db!: Database.Database;
  /** Preparing costs more than running these one-row statements. */
  private statements = new Map<string, Database.Statement>();
  private inSavepoint!: (work: Work<unknown>) => unknown;
  private readonly file: string;
  private readonly options: Required<SqliteStoreOptions>;
  private readonly writes = new TurnBatch<PendingWrite['item'], unknown>((batch) => this.commitBatch(batch));
  private closed = false;
  /** Set after an I/O-level failure: the next call reopens the file before using it. */
  private needsReopen = false;
  private readonly migrationsApplied: Migration[] = [];
  private readonly syncsWal: boolean;
  /** Opened on the first sync of a connection (SQLite creates the WAL on the first write). */
  private walFd: number | undefined;
  private syncsInFlight = 0;
  private onSyncsEnded: (() => void)[] = [];
  /** Writes of earlier turns held while an fsync runs (see commitBatch). */
  private heldWrites: PendingWrite[] = [];
  /** close() began: what is held commits now, without waiting for the fsync in flight. */
  private closing = false;

  static open(options: SqliteStoreOptions): SqliteStore {
    fs.mkdirSync(options.dataDir, { recursive: true });
    return new SqliteStore(options);
  }

  private constructor(options: SqliteStoreOptions) {
    super();
    this.options = { sqliteSynchronous: 'FULL', fsync: fs.fsync, ...options };
    this.syncsWal = this.options.sqliteSynchronous === 'FULL';
    this.file = path.join(options.dataDir, SQLITE_FILE_NAME);
    try {
      this.openDatabase();
    } catch (error) {
      // A read-only or full data dir must not stop the relay: 503 now, the file opened once usable.
      if (!(toStorageError(error) instanceof StorageUnavailableError)) throw error;
      this.db = new (loadSqliteDriver())(':memory:');
      this.needsReopen = true;
    }
  }

  private openDatabase(): void {
    const db = new (loadSqliteDriver())(this.file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.syncsWal ? 'NORMAL' : this.options.sqliteSynchronous}`);
      // How long a writer waits on another connection's lock before giving up (503).
      db.pragma('busy_timeout = 200');
      const current = db.pragma('user_version', { simple: true }) as number;
      for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version > current)) {
        db.transaction(() => {
          db.exec(migration.sql);
          db.pragma(`user_version = ${migration.version}`);
        })();
        this.migrationsApplied.push(migration);
      }
    } catch (error) {
      // A half-opened handle would keep the file (and its volume) busy after every failed attempt.
      db.close();
      throw error;
    }
    this.db = db;
    this.statements = new Map();
    this.inSavepoint = db.transaction((work: Work<unknown>) => this.runWork(work));
  }

  /** A failed connection is reopened on the next call, once the disk is usable again. */
  private run<T>(fn: () => T): T {
    if (this.closed) throw storeClosedError();
    try {
      if (this.needsReopen) {
        this.db.close();
        this.closeWal();
        this.openDatabase();
        this.needsReopen = false;
      }
      return fn();
    } catch (error) {
      const mapped = toStorageError(error);
      // A read-only or vanished file can keep failing on the same handle; busy and full cannot.
      if (mapped instanceof StorageUnavailableError && /^SQLITE_(READONLY|IOERR|CANTOPEN|CORRUPT|NOTADB)/.test(mapped.code)) {
        this.needsReopen = true;
      }
      throw mapped;
    }
  }

  private runWork<T>(work: Work<T>): T {
    let step = work.next();
    while (!step.done) {
      const { statement, params, result } = step.value;
      const text = statement.compile(SQLITE_DIALECT).text;
      let prepared = this.statements.get(text);
      if (!prepared) this.statements.set(text, (prepared = this.db.prepare(text)));
      const values = statement.bind(SQLITE_DIALECT, params);
      step = work.next(result === 'rows' ? prepared.all(...values) : prepared.run(...values).changes);
    }
    return step.value;
  }

  get database(): Database.Database {
    return this.db;
  }

  async migrate(): Promise<MigrationReport> {
    return reportMigrations(SQLITE_MIGRATIONS, this.migrationsApplied);
  }

  protected async read<T>(work: Work<T>): Promise<T> {
    return this.run(() => this.runWork(work));
  }

  /**
   * Queued for the next group commit. A write failing on its own (a constraint) rejects alone (atomic ones run
   * in a savepoint); a storage error (I/O, full, locked) rejects the whole batch, none of it committed.
   */
  protected write<T>(work: Work<T>, { atomic }: { atomic: boolean }): Promise<T> {
    if (this.closed) return Promise.reject(storeClosedError());
    return this.writes.add({ work, single: !atomic }) as Promise<T>;
  }

  /**
   * Commits a turn's writes in one transaction, settled once on disk. Writes arriving during an fsync are held
   * and committed together when it ends: one fsync (costly) for all of them.
   */
  private commitBatch(turn: PendingWrite[]): void {
    this.heldWrites.push(...turn);
    if (this.syncsWal && this.syncsInFlight > 0 && !this.closing) return;
    const batch = this.heldWrites;
    this.heldWrites = [];
    if (batch.length === 0) return;
    let settled: ({ value: unknown } | { error: unknown })[];
    try {
      settled = this.run(() =>
        this.db.transaction(() =>
          batch.map(({ item }) => {
            try {
              return { value: item.single ? this.runWork(item.work) : this.inSavepoint(item.work) };
            } catch (error) {
              // Nothing of the batch can commit after an I/O error: fail it all (run() maps and reopens).
              if (toStorageError(error) instanceof StorageUnavailableError) throw error;
              return { error };
            }
          }),
        )(),
      );
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    this.syncWal((syncError) => {
      batch.forEach((p, i) => {
        const outcome = settled[i];
        if (syncError) p.reject(syncError);
        else if ('error' in outcome) p.reject(outcome.error);
        else p.resolve(outcome.value);
      });
    });
  }

  /** Calls `done` after an fsync of the WAL that starts now. When one ends, the writes held meanwhile commit. */
  private syncWal(done: (error?: Error) => void): void {
    if (!this.syncsWal) {
      done();
      return;
    }
    // After a failed fsync the kernel may have dropped the dirty pages: start over from the file.
    const fail = (error: Error) => {
      this.needsReopen = true;
      done(new StorageUnavailableError(`the outbox cannot sync its journal: ${error.message}`, 'WAL_SYNC_FAILED', { cause: error }));
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
      else done();
      if (this.heldWrites.length > 0) this.commitBatch([]);
      if (this.syncsInFlight === 0) for (const ended of this.onSyncsEnded.splice(0)) ended();
    });
  }

  /** One descriptor per connection (the WAL keeps its inode); the directory synced once, as SQLite does. */
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
    this.commitBatch([]);
    // Whatever is syncing settles before the file closes (a failure rejects those callers, not close).
    if (this.syncsInFlight > 0) await new Promise<void>((resolve) => this.onSyncsEnded.push(resolve));
    if (this.closed) return;
    this.closed = true;
    this.db.close();
    this.closeWal();
  }
}

/** SQLite result codes that mean "cannot commit now": the caller answers 503 and may retry. */
function toStorageError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) {
    return new StorageUnavailableError(`the outbox cannot commit: ${(error as Error).message}`, code, { cause: error });
  }
  return error;
}

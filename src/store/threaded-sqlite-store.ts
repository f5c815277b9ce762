import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store';
import { decodeThreadError, detachBuffers, reviveBuffers, type StoreCall, type StoreMethod, type StoreReply } from './thread-messages';
import { StorageUnavailableError, type MigrationReport, type Store } from './types';

/** The compiled thread script; absent when running from TypeScript sources (tests under jest). */
const THREAD_SCRIPT = path.join(__dirname, 'sqlite-thread.js');

/** Every method of the Store contract; the compiler rejects this list when the contract grows. */
const FORWARDED = {
  migrate: true, insertDelivery: true, claimDue: true, markSent: true, markRetry: true, markDead: true, releaseLeases: true,
  getDelivery: true, listDeliveries: true, requeue: true, requeueAllDead: true, countByState: true, pruneDeliveries: true,
  oldestPendingAt: true, nextDueAt: true, saveReport: true, findReportBefore: true, lastReportReceivedAt: true,
  getWatchdogState: true, transitionWatchdog: true, getDeliveryBody: true, saveSentMessage: true, getSentMessage: true,
  recordRouteDecisions: true, listRouteMails: true, markRouteMailSent: true, markRouteMailFailed: true,
  lastRouteMailCompletedAt: true, checkWritable: true, close: true,
} satisfies Record<StoreMethod, true>;

/**
 * Calls sent in one message at most. The rest of a turn's calls follow at its end; a burst of
 * webhooks read in one turn thus reaches the thread in pieces, and the first ones are committed
 * while this thread still reads the others (one message per turn left it idle, waiting, every turn).
 */
const CALLS_PER_MESSAGE = 8;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

// The class below gets one forwarding method per entry of FORWARDED; this tells the compiler so.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface ThreadedSqliteStore extends Store {}

/**
 * The SQLite store on its own thread: {@link SqliteStore} unchanged (same file, same group commit,
 * same off-loop WAL fsync), run by a worker thread, with every call and answer passed as messages,
 * batched per event-loop turn in both directions.
 *
 * Why: better-sqlite3 is synchronous. On the event loop, every insert, claim and outcome costs the
 * HTTP server its time: under a burst of webhooks the statements and commits were an eighth of the
 * ack path (BENCHMARKS.md, ingest profile), and the delivery worker's writes delayed acks behind
 * them. Here the event loop only copies a message.
 *
 * The file is opened (and migrated) once on the calling thread first, so that a database the relay
 * cannot use stops the start with the same error as before. When the thread dies, the calls in
 * flight fail with StorageUnavailableError (503: the sender retries, deduplication keeps one copy)
 * and the next call starts a new thread.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class ThreadedSqliteStore {
  readonly singleOwner = true;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private outbox: StoreCall[] = [];
  private transfer: ArrayBuffer[] = [];
  private flushScheduled = false;
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly options: Pick<SqliteStoreOptions, 'dataDir' | 'synchronous' | 'busyTimeoutMs'>,
    private readonly script: string,
    private readonly migration: MigrationReport,
  ) {
    for (const method of Object.keys(FORWARDED) as StoreMethod[]) {
      if (method === 'migrate' || method === 'close') continue;
      (this as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => this.call(method, args);
    }
  }

  /**
   * Opens (and migrates) the file here, then starts the thread that will own it. Undefined when the
   * thread script is not built (running from TypeScript sources): the caller uses SqliteStore in-line.
   */
  static open(options: Pick<SqliteStoreOptions, 'dataDir' | 'synchronous' | 'busyTimeoutMs'>, script = THREAD_SCRIPT): ThreadedSqliteStore | undefined {
    if (!fs.existsSync(script)) return undefined;
    const here = SqliteStore.open(options);
    const migration = here.migrationReport();
    here.closeNow();
    return new ThreadedSqliteStore(options, script, migration);
  }

  async migrate(): Promise<MigrationReport> {
    return this.migration;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.worker) await this.call('close', []).catch(() => undefined);
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private call(method: StoreMethod, args: unknown[]): Promise<never> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new StorageUnavailableError('the store is closed', 'STORE_CLOSED'));
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.size === 1) this.ensureWorker().ref();
      this.outbox.push({ id, method, args: detachBuffers(args, this.transfer) });
      // A full message leaves now, so the thread commits (and syncs) while this turn goes on.
      if (this.outbox.length >= CALLS_PER_MESSAGE) {
        this.flush();
        return;
      }
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    const calls = this.outbox;
    const transfer = this.transfer;
    this.outbox = [];
    this.transfer = [];
    if (calls.length === 0) return;
    try {
      this.ensureWorker().postMessage(calls, transfer);
    } catch (error) {
      this.failCalls(calls.map((c) => c.id), `the outbox thread cannot take calls: ${(error as Error).message}`);
    }
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.script, { workerData: this.options });
    worker.unref();
    worker.on('message', (replies: StoreReply[]) => {
      for (const r of replies) {
        const p = this.pending.get(r.id);
        if (!p) continue;
        this.pending.delete(r.id);
        if ('error' in r) p.reject(decodeThreadError(r.error));
        else p.resolve(reviveBuffers(r.value));
      }
      if (this.pending.size === 0) worker.unref();
    });
    const stopped = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failCalls([...this.pending.keys()], `the outbox thread stopped (${reason}); nothing in flight is known to be committed`);
    };
    worker.on('error', (error) => stopped(error.message));
    worker.on('exit', (code) => stopped(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private failCalls(ids: number[], message: string): void {
    for (const id of ids) {
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      p.reject(new StorageUnavailableError(message, 'STORE_THREAD_STOPPED'));
    }
  }
}

import fs from 'node:fs';
import { SqliteStore, type NewDelivery } from '../../src/store';
import { makeTempDir } from '../helpers/relay-harness';
import { markDead, markRetry, markSent } from '../helpers/store-writes';

function delivery(n: number): NewDelivery {
  return {
    dedupKey: `${n}@2026-01-01T00:00:00Z`,
    reportId: n,
    reportCreated: '2026-01-01T00:00:00Z',
    completedAt: '2026-01-01T00:00:00Z',
    sender: '127.0.0.1',
    body: Buffer.from(`{"n":${n}}`),
    receivedAt: 1_000,
  };
}

// The worker's writes share the ingest's group commit: many in one event-loop turn, one transaction.
// What a user relies on is unchanged: each promise settles after its own row is durable.
describe('SQLite group commit of inserts, claims and outcomes', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = makeTempDir('group-commit-');
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('settles every write of one turn with its own result, and all of them survive a reopen', async () => {
    const store = SqliteStore.open({ dataDir });
    // Same turn: 30 new deliveries and a duplicate of one of them.
    const inserted = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => store.insertDelivery(delivery(i + 1))),
      store.insertDelivery(delivery(7)),
    ]);
    expect(inserted.filter((r) => !r.duplicate)).toHaveLength(30);
    expect(inserted[30]).toEqual({ id: inserted[6].id, duplicate: true });

    const claimed = await store.claimDue({ now: 2_000, limit: 30, owner: 'w', leaseMs: 60_000 });
    expect(claimed.map((c) => c.reportId)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    // Same turn again: a mix of outcomes, plus a claim that must not see rows still leased.
    const [, , , again] = await Promise.all([
      Promise.all(claimed.slice(0, 10).map((c) => markSent(store, c.id, { now: 3_000, messageId: `<m${c.id}@x>` }))),
      Promise.all(
        claimed
          .slice(10, 20)
          .map((c) => markRetry(store, c.id, { now: 3_000, nextAttemptAt: 9_000, error: 'refused', code: 'ECONNREFUSED' })),
      ),
      Promise.all(claimed.slice(20).map((c) => markDead(store, c.id, { now: 3_000, error: '550 no', code: 'SMTP_5XX' }))),
      store.claimDue({ now: 3_000, limit: 30, owner: 'w2', leaseMs: 60_000 }),
    ]);
    expect(again).toEqual([]);
    await store.close();

    const reopened = SqliteStore.open({ dataDir });
    try {
      expect((await reopened.readQueue()).counts).toEqual({ queued: 0, sending: 0, retrying: 10, sent: 10, dead: 10 });
      expect((await reopened.getDelivery(claimed[0].id))?.messageId).toBe(`<m${claimed[0].id}@x>`);
      expect((await reopened.getDelivery(claimed[15].id))?.lastErrorCode).toBe('ECONNREFUSED');
    } finally {
      await reopened.close();
    }
  });

  it('rejects queued writes once the store is closed, and commits what was queued before', async () => {
    const store = SqliteStore.open({ dataDir });
    const pending = store.insertDelivery(delivery(1));
    await store.close();
    await expect(pending).resolves.toMatchObject({ duplicate: false });
    await expect(markSent(store, 1, { now: 1, messageId: '<x@y>' })).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});

// synchronous=FULL without stalling the event loop: commits write the WAL, the store fsyncs it on
// the thread pool, and nothing resolves before the fsync that covers it has finished.
describe('SQLite WAL sync off the event loop (synchronous=FULL)', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = makeTempDir('wal-sync-');
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** A real fsync that waits until the test lets it go, and records what it flushed. */
  function heldFsync() {
    const held: (() => void)[] = [];
    const flushedFiles: string[] = [];
    const fsync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      flushedFiles.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
      held.push(() => fs.fsync(fd, callback));
    };
    const releaseAll = () => held.splice(0).forEach((go) => go());
    return { fsync, held, flushedFiles, releaseAll };
  }

  it('acknowledges a write only after a WAL fsync that began after it, runs one at a time, and keeps the event loop free', async () => {
    const sync = heldFsync();
    const store = SqliteStore.open({ dataDir, fsync: sync.fsync });
    const settled: number[] = [];
    const insert = (n: number) => store.insertDelivery(delivery(n)).then((r) => (settled.push(n), r));
    const turn = () => new Promise((r) => setTimeout(r, 20));

    const first = insert(1);
    await turn();
    // Committed, its fsync held: not acknowledged, and timers still run meanwhile.
    expect(sync.held).toHaveLength(1);
    expect(sync.flushedFiles[0]).toBe(`${fs.realpathSync(dataDir)}/relay.sqlite-wal`);
    const second = insert(2);
    await turn();
    const third = [insert(3), insert(4)];
    await turn();
    // Writes of later turns wait while the first fsync runs: none of them starts its own.
    expect(sync.held).toHaveLength(1);
    expect(settled).toEqual([]);

    sync.releaseAll();
    await expect(first).resolves.toMatchObject({ duplicate: false });
    await turn();
    expect(settled).toEqual([1]);
    // The waiting writes of two turns share the next fsync.
    expect(sync.held).toHaveLength(1);
    sync.releaseAll();
    await expect(Promise.all([second, ...third])).resolves.toHaveLength(3);
    expect(settled.sort()).toEqual([1, 2, 3, 4]);
    expect(sync.flushedFiles).toHaveLength(2);
    await store.close();
  });

  it('answers a failed fsync as storage unavailable (retry can help) and recovers on the next write', async () => {
    let fail = true;
    const store = SqliteStore.open({
      dataDir,
      fsync: (fd, callback) =>
        fail ? setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))) : fs.fsync(fd, callback),
    });
    await expect(store.insertDelivery(delivery(1))).rejects.toMatchObject({ name: 'StorageUnavailableError', code: 'WAL_SYNC_FAILED' });
    fail = false;
    // The sender retries the same delivery: stored once, and this time acknowledged.
    const retried = await store.insertDelivery(delivery(1));
    expect((await store.readQueue()).counts).toMatchObject({ queued: 1 });
    expect(retried.id).toBeGreaterThan(0);
    await store.close();
  });

  it('with synchronous=NORMAL leaves syncing to SQLite checkpoints', async () => {
    const sync = heldFsync();
    const store = SqliteStore.open({ dataDir, sqliteSynchronous: 'NORMAL', fsync: sync.fsync });
    await store.insertDelivery(delivery(1));
    expect(sync.held).toHaveLength(0);
    await store.close();
  });
});

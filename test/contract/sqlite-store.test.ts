import fs from 'node:fs';
import path from 'node:path';
import { SqliteStore, ThreadedSqliteStore } from '../../src/store';
import { makeTempDir } from '../helpers/relay-harness';
import { describeStoreContract } from './store-contract';

describeStoreContract('SQLite', async () => {
  const dataDir = makeTempDir('store-contract-');
  return {
    open: async () => SqliteStore.open({ dataDir }),
    cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
});

test('SQLite is a single-owner store: the relay releases its leases at boot', () => {
  const dataDir = makeTempDir('store-contract-');
  try {
    const store = SqliteStore.open({ dataDir });
    expect(store.singleOwner).toBe(true);
    void store.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

// `serve` runs the same store on its own thread: the contract holds across the thread boundary
// (the compiled thread script: `npm test` builds before it runs jest).
const THREAD_SCRIPT = path.resolve(__dirname, '../../dist/src/store/sqlite-thread.js');

describeStoreContract('SQLite on its own thread', async () => {
  const dataDir = makeTempDir('store-contract-thread-');
  return {
    open: async () => {
      const store = ThreadedSqliteStore.open({ dataDir }, THREAD_SCRIPT);
      if (!store) throw new Error(`${THREAD_SCRIPT} is not built: run npm run build`);
      return store;
    },
    cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
});

test('when the outbox thread dies, the calls in flight fail as storage unavailable (a 503, retried) and the next call starts a new thread', async () => {
  const dataDir = makeTempDir('store-thread-death-');
  const dying = path.resolve(__dirname, '../fixtures/threads/dying-store-thread.js');
  const store = ThreadedSqliteStore.open({ dataDir }, dying)!;
  try {
    const delivery = { dedupKey: '1@2026-01-01T00:00:00Z', reportId: 1, reportCreated: '2026-01-01T00:00:00Z', completedAt: '2026-01-01T00:00:00Z', source: '127.0.0.1', body: Buffer.from('{}'), receivedAt: 1 };
    await expect(store.insertDelivery(delivery)).rejects.toMatchObject({ name: 'StorageUnavailableError', code: 'STORE_THREAD_STOPPED' });
    // A new thread takes the next call (this one dies too, and says so again).
    await expect(store.countByState()).rejects.toMatchObject({ code: 'STORE_THREAD_STOPPED' });
  } finally {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

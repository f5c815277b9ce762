import fs from 'node:fs';
import { SqliteStore } from '../../src/store';
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


import { PG_MIGRATIONS, PgStore, StorageUnavailableError } from '../../src/store';
import { createTestSchema } from '../helpers/pg-schema';
import { describeStoreContract, makeDelivery } from './store-contract';

describeStoreContract('PostgreSQL', async () => {
  const schema = await createTestSchema('store_contract');
  return {
    open: async () => {
      const store = new PgStore({ connectionString: schema.url, poolSize: 4 });
      await store.migrate();
      return store;
    },
    cleanup: () => schema.drop(),
  };
});

describe('PgStore beyond the contract', () => {
  test('replicas starting together apply each migration once, under the advisory lock', async () => {
    const schema = await createTestSchema('store_migrate');
    const stores = Array.from({ length: 5 }, () => new PgStore({ connectionString: schema.url, poolSize: 2 }));
    try {
      const reports = await Promise.all(stores.map((s) => s.migrate()));
      const applied = reports.flatMap((r) => r.applied);
      // Each migration applied by exactly one of the five, whichever took the lock first.
      expect([...applied].sort()).toEqual(PG_MIGRATIONS.map((m) => `${String(m.version).padStart(3, '0')}-${m.name}`));
      const { rows } = await schema.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      expect(stores.every((s) => s.singleOwner === false)).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await schema.drop();
    }
  });

  test('an unreachable database is a StorageUnavailableError (503), never a hang or a crash', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const store = new PgStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMs: 2_000 });
    try {
      await expect(store.migrate()).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.insertDelivery(makeDelivery(1))).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.claimDue({ now: 0, limit: 1, owner: 'a', leaseMs: 1 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.checkWritable(0)).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await store.close();
    }
  });
});

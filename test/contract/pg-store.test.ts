import net from 'node:net';
import { PG_MIGRATIONS, PgStore, StorageUnavailableError, type NewDelivery } from '../../src/store';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { describeStoreContract, makeDelivery, type LegacyRows } from './store-contract';

describeStoreContract('PostgreSQL', async () => {
  const schema = await createTestSchema('store_contract');
  return {
    open: async () => {
      const store = new PgStore({ connectionString: schema.url });
      await store.migrate();
      return store;
    },
    cleanup: () => schema.drop(),
    seedSchema: (version, rows, legacy) => seedPgSchema(schema, version, rows, legacy),
  };
});

/** A schema as an older relay left it: its migrations applied and recorded, its rows stored with the columns it had. */
async function seedPgSchema(schema: TestSchema, version: number, rows: readonly NewDelivery[], legacy: LegacyRows = {}): Promise<void> {
  await schema.query(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
  );
  for (const migration of PG_MIGRATIONS.filter((m) => m.version <= version)) {
    await schema.query(migration.sql);
    await schema.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
  }
  for (const r of rows) {
    await schema.query(
      `INSERT INTO deliveries (dedup_key, report_id, report_created, completed_at, source, body, received_at, next_attempt_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7)`,
      [r.dedupKey, r.reportId, r.reportCreated, r.completedAt, r.sender, r.body, r.receivedAt],
    );
  }
  for (const m of legacy.routeMails ?? [])
    await schema.query(
      `INSERT INTO route_mails (delivery_id, route, position, outcome, reason, state, message_id, decided_at, updated_at)
       VALUES ($1, $2, $3, 'send', 'matched', $4, $5, 0, 0)`,
      [m.deliveryId, m.route, m.position, m.state, m.messageId],
    );
  for (const m of legacy.sentMessages ?? [])
    await schema.query(
      `INSERT INTO sent_messages (delivery_id, raw, envelope_from, envelope_to, subject, text_part, html_part, response, sent_at)
       VALUES ($1, $2, 'relay@example.com', $3, 'report', $4, $5, '250 OK', $6)`,
      [m.deliveryId, m.raw, JSON.stringify(m.envelopeTo), m.parts?.text ?? null, m.parts?.html ?? null, m.sentAt],
    );
}

describe('PgStore beyond the contract', () => {
  test('replicas starting together apply each migration once, under the advisory lock', async () => {
    const schema = await createTestSchema('store_migrate');
    const stores = Array.from({ length: 5 }, () => new PgStore({ connectionString: schema.url }));
    try {
      const reports = await Promise.all(stores.map((s) => s.migrate()));
      const applied = reports.flatMap((r) => r.applied);
      // Each migration applied by exactly one of the five, whichever took the lock first.
      expect([...applied].sort()).toEqual(PG_MIGRATIONS.map((m) => `${String(m.version).padStart(3, '0')}-${m.name}`));
      const { rows } = await schema.query<{ version: number; name: string }>(
        'SELECT version, name FROM schema_migrations ORDER BY version',
      );
      expect(rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      expect(stores.every((s) => s.singleOwner === false)).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await schema.drop();
    }
  });

  test('an unreachable database is a StorageUnavailableError (503), never a hang or a crash', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const store = new PgStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    try {
      await expect(store.migrate()).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.insertDelivery(makeDelivery(1))).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.claimDue({ now: 0, limit: 1, owner: 'a', leaseMs: 1 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.checkWritable(0)).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await store.close();
    }
  });

  test('a database shutting down as a connection opens is a StorageUnavailableError, never a crash', async () => {
    // A server that finishes the start-up and, in the same TCP segment, terminates the session as a
    // PostgreSQL in fast shutdown does (57P01). The driver reports it as an 'error' event on the client at once.
    const server = await listenAsShuttingDownPostgres();
    const { port } = server.address() as net.AddressInfo;
    const store = new PgStore({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    try {
      await expect(store.migrate()).rejects.toMatchObject({ name: 'StorageUnavailableError' });
      await expect(store.readQueue()).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await store.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** Answers every start-up message with "authenticated, ready" and, right behind it, FATAL 57P01. */
async function listenAsShuttingDownPostgres(): Promise<net.Server> {
  const message = (type: string, body: Buffer) => {
    const header = Buffer.alloc(5);
    header.write(type, 0, 'latin1');
    header.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([header, body]);
  };
  const authenticationOk = message('R', Buffer.from([0, 0, 0, 0]));
  const readyForQuery = message('Z', Buffer.from('I', 'latin1'));
  const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'];
  const terminated = message('E', Buffer.concat([...fields.map((f) => Buffer.from(`${f}\0`, 'latin1')), Buffer.from([0])]));
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.end(Buffer.concat([authenticationOk, readyForQuery, terminated])));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE_NAME, SqliteStore, type NewDelivery } from '../../src/store';
import { SQLITE_MIGRATIONS } from '../../src/store/migrations';
import { makeTempDir } from '../helpers/relay-harness';
import { describeStoreContract, type LegacyRows } from './store-contract';

describeStoreContract('SQLite', async () => {
  const dataDir = makeTempDir('store-contract-');
  return {
    open: async () => SqliteStore.open({ dataDir }),
    cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    seedSchema: (version, rows, legacy) => Promise.resolve(seedSqliteSchema(path.join(dataDir, SQLITE_FILE_NAME), version, rows, legacy)),
  };
});

/** A file as an older relay left it: its migrations applied, its rows stored with the columns it had. */
function seedSqliteSchema(file: string, version: number, rows: readonly NewDelivery[], legacy: LegacyRows = {}): void {
  const db = new Database(file);
  try {
    for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= version)) db.exec(migration.sql);
    db.pragma(`user_version = ${version}`);
    const insert = db.prepare(
      'INSERT INTO deliveries (dedup_key, report_id, report_created, completed_at, source, body, received_at, next_attempt_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const r of rows)
      insert.run(r.dedupKey, r.reportId, r.reportCreated, r.completedAt, r.sender, r.body, r.receivedAt, r.receivedAt, r.receivedAt);
    const route = db.prepare(
      "INSERT INTO route_mails (delivery_id, route, position, outcome, reason, state, message_id, decided_at, updated_at) VALUES (?, ?, ?, 'send', 'matched', ?, ?, 0, 0)",
    );
    for (const m of legacy.routeMails ?? []) route.run(m.deliveryId, m.route, m.position, m.state, m.messageId);
    const sent = db.prepare(
      "INSERT INTO sent_messages (delivery_id, raw, envelope_from, envelope_to, subject, text_part, html_part, response, sent_at) VALUES (?, ?, 'relay@example.com', ?, 'report', ?, ?, '250 OK', ?)",
    );
    for (const m of legacy.sentMessages ?? [])
      sent.run(m.deliveryId, m.raw, JSON.stringify(m.envelopeTo), m.parts?.text ?? null, m.parts?.html ?? null, m.sentAt);
  } finally {
    db.close();
  }
}

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

test("migration 9 keeps the watchdog's state as the default source's", async () => {
  const dataDir = makeTempDir('store-contract-');
  try {
    seedSqliteSchema(path.join(dataDir, SQLITE_FILE_NAME), 6, []);
    const db = new Database(path.join(dataDir, SQLITE_FILE_NAME));
    db.prepare("INSERT INTO watchdog_state (id, state, since, created_at, changed_at, version) VALUES (1, 'overdue', 5, 1, 6, 3)").run();
    db.close();
    const store = SqliteStore.open({ dataDir });
    try {
      expect((await store.migrate()).applied).toEqual([
        '007-sent_messages_per_route',
        '008-delivery_list_indexes',
        '009-netbox_sources',
        '010-digest_periods',
        '011-route_mail_owner_groups',
        '012-reports_failing_index',
        '013-waivers',
        '014-delivery_kind',
        '015-report_arrival',
        '016-report_pair_states',
        '017-catch_up',
      ]);
      expect(await store.getWatchdogState(100)).toEqual({ state: 'overdue', since: 5, createdAt: 1, changedAt: 6, version: 3 });
      expect(await store.getWatchdogState(100, 'lab')).toEqual({ state: 'ok', since: null, createdAt: 100, changedAt: 100, version: 0 });
    } finally {
      await store.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * The waivers' part of the store contract, run against both engines: add, list (active, expiring,
 * expired, by source), expire, and the waivers in force at a time. A second instance on the same data
 * (a second replica on PostgreSQL) sees what the first wrote.
 */
import fs from 'node:fs';
import { PgStore, SqliteStore, type Store } from '../../src/store';
import { buildWaiverEnd, DAY_MS, type NewWaiver } from '../../src/waivers';
import { createTestSchema } from '../helpers/pg-schema';
import { makeTempDir } from '../helpers/relay-harness';

const NOW = Date.UTC(2026, 10, 27, 9, 0);

interface Backing {
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

const ENGINES: [string, () => Promise<Backing>][] = [
  [
    'SQLite',
    async () => {
      const dataDir = makeTempDir('waiver-store-');
      return { open: async () => SqliteStore.open({ dataDir }), cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = await createTestSchema('waiver_store');
      return { open: async () => new PgStore({ connectionString: schema.url }), cleanup: () => schema.drop() };
    },
  ],
];

function newWaiver(overrides: Partial<NewWaiver> = {}): NewWaiver {
  const until = overrides.until ?? '2027-03-31';
  return {
    source: 'default',
    test: 'ntp',
    device: 'sw1',
    until,
    endsAt: buildWaiverEnd(until),
    reason: 'awaiting replacement',
    author: 'alice',
    createdAt: NOW - DAY_MS,
    ...overrides,
  };
}

describe.each(ENGINES)('waivers in the %s store', (_engine, makeBacking) => {
  let backing: Backing;
  let store: Store;
  let other: Store;

  beforeEach(async () => {
    backing = await makeBacking();
    store = await backing.open();
    other = await backing.open();
  });

  afterEach(async () => {
    await store.close();
    await other.close();
    await backing.cleanup();
  });

  test('an added waiver is read back whole, by another instance too, with an id of its own', async () => {
    const added = await store.addWaiver(newWaiver({ device: null, reason: 'lab estate' }));
    const second = await store.addWaiver(newWaiver({ test: 'quote\'s "test" é' }));
    expect(added).toEqual({
      ...newWaiver({ device: null, reason: 'lab estate' }),
      id: added.id,
      origin: 'store',
      expiredAt: null,
      expiredBy: null,
    });
    expect(added.id).toMatch(/^\d+$/);
    expect(second.id).not.toBe(added.id);
    expect(await other.getWaiver(added.id)).toEqual(added);
    expect((await other.getWaiver(second.id))?.test).toBe('quote\'s "test" é');
    expect(await other.getWaiver('file:1')).toBeUndefined();
    expect(await other.getWaiver('999999')).toBeUndefined();
  });

  test('lists by status at a time (active includes expiring), by source, test and device, newest first', async () => {
    const far = await store.addWaiver(newWaiver({ until: '2027-03-31' }));
    const soon = await store.addWaiver(newWaiver({ until: '2026-12-01', device: 'sw2' }));
    const over = await store.addWaiver(newWaiver({ until: '2026-11-20', test: 'ssh' }));
    const lab = await store.addWaiver(newWaiver({ source: 'lab', device: null, reason: 'lab' }));
    const ids = async (filter: Parameters<Store['listWaivers']>[0]) => (await other.listWaivers(filter)).map((w) => w.id);
    expect(await ids({ at: NOW })).toEqual([lab.id, over.id, soon.id, far.id]);
    expect(await ids({ at: NOW, status: 'active' })).toEqual([lab.id, soon.id, far.id]);
    expect(await ids({ at: NOW, status: 'expiring' })).toEqual([soon.id]);
    expect(await ids({ at: NOW, status: 'expired' })).toEqual([over.id]);
    expect(await ids({ at: NOW, source: 'lab' })).toEqual([lab.id]);
    expect(await ids({ at: NOW, source: 'default', test: 'ntp', device: 'sw2' })).toEqual([soon.id]);
    expect(await ids({ at: NOW, limit: 2 })).toEqual([lab.id, over.id]);
    // A week later the soon one is over too: the status is the time's, not the row's.
    expect(await ids({ at: NOW + 7 * DAY_MS, status: 'expired' })).toEqual([over.id, soon.id]);
  });

  test('the waivers in force at a time, and those ended since a time (what a report made now needs)', async () => {
    const running = await store.addWaiver(newWaiver());
    const endedYesterday = await store.addWaiver(newWaiver({ until: '2026-11-25', device: 'sw2' }));
    await store.addWaiver(newWaiver({ until: '2026-11-01', device: 'sw3' }));
    expect(await other.countWaiversInForce(NOW)).toBe(1);
    expect((await other.listWaivers({ at: NOW, status: 'active', source: 'default' })).map((w) => w.id)).toEqual([running.id]);
    const sinceLastReport = await other.listWaivers({ at: NOW, source: 'default', endedSince: NOW - 3 * DAY_MS });
    expect(sinceLastReport.map((w) => w.id)).toEqual([endedYesterday.id, running.id]);
    // In force from the moment it was made (a day ago), not before.
    expect(await other.countWaiversInForce(NOW - DAY_MS)).toBe(1);
    expect(await other.countWaiversInForce(NOW - DAY_MS - 1)).toBe(0);
  });

  test('expire ends a waiver in force now and keeps it, with who ended it; an ended one stays as it was', async () => {
    const waiver = await store.addWaiver(newWaiver());
    const expired = await store.expireWaiver(waiver.id, { now: NOW, by: 'bob' });
    expect(expired).toEqual({ ...waiver, endsAt: NOW, expiredAt: NOW, expiredBy: 'bob' });
    expect(await other.getWaiver(waiver.id)).toEqual(expired);
    expect(await other.expireWaiver(waiver.id, { now: NOW + 1, by: 'carol' })).toBeUndefined();
    expect((await other.getWaiver(waiver.id))?.expiredBy).toBe('bob');
    expect((await other.listWaivers({ at: NOW, status: 'expired' })).map((w) => w.id)).toEqual([waiver.id]);
    expect(await other.countWaiversInForce(NOW)).toBe(0);
    expect(await other.expireWaiver('404', { now: NOW, by: 'bob' })).toBeUndefined();
    expect(await other.expireWaiver('file:1', { now: NOW, by: 'bob' })).toBeUndefined();
  });
});

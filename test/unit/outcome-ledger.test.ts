import fs from 'node:fs';
import { createOutcomeLedger, type LedgerTimers, type OutcomeLedger } from '../../src/delivery';
import { createLogger } from '../../src/shared';
import { SqliteStore, StorageUnavailableError, type Store } from '../../src/store';
import { makeDelivery, makeReport } from '../contract/store-contract';
import { makeTempDir, waitUntil } from '../helpers/relay-harness';

const T0 = 1_700_000_000_000;
const LEASE_MS = 1_000;
const OWNER = 'relay-under-test';

/**
 * The ledger against a real SQLite file whose outcome writes are refused while `full` is set, as on
 * a full disk where a claim's in-place update still fits but a record that needs space does not.
 * The clock and the ledger's timers are the test's: retries happen when the test fires them.
 */
describe('outcome ledger', () => {
  let dir: string;
  let store: SqliteStore;
  let full: boolean;
  let now: number;
  let pending: (() => void)[];
  let logs: { level: number; msg: string; [key: string]: unknown }[];
  let changes: number[];

  const timers: LedgerTimers = {
    setTimeout: (callback) => pending.push(callback),
    clearTimeout: () => undefined,
  };
  /** Fires every retry the ledger has scheduled so far (as if their delay had passed). */
  const fireTimers = () => pending.splice(0).forEach((callback) => callback());

  const refusing = <K extends keyof Store>(name: K) =>
    ((...args: unknown[]) => {
      if (full) return Promise.reject(new StorageUnavailableError('the outbox cannot commit: database or disk is full', 'SQLITE_FULL'));
      return (store[name] as (...a: unknown[]) => Promise<unknown>).apply(store, args);
    }) as Store[K];

  function openLedger(maxUnrecorded = 10): OutcomeLedger {
    return createOutcomeLedger({
      store: {
        markRouteMailSent: refusing('markRouteMailSent'),
        markRouteMailFailed: refusing('markRouteMailFailed'),
        markSent: refusing('markSent'),
        markRetry: refusing('markRetry'),
        markDead: refusing('markDead'),
        saveReport: refusing('saveReport'),
        // The lease's in-place update still fits: only records that need space are refused.
        extendLeases: (options) => store.extendLeases(options),
      },
      clock: { now: () => now },
      logger: createLogger({ level: 'debug', format: 'json', destination: { write: (line: string) => void logs.push(JSON.parse(line)) } }),
      leaseMs: LEASE_MS,
      maxUnrecorded,
      random: () => 1,
      timers,
      onChange: (n) => changes.push(n),
    });
  }

  /** A delivery claimed by OWNER (its lease ends at T0 + 1100) with one pending route mail, as the worker has it before its send. */
  async function claimedDelivery(n: number): Promise<number> {
    const { id } = await store.insertDelivery(makeDelivery(n));
    await store.claimDue({ now: T0 + 100, limit: 1, owner: OWNER, leaseMs: LEASE_MS });
    await store.recordRouteDecisions(id, [{ route: 'default', position: 0, outcome: 'send', reason: 'always', reminder: false }], T0);
    return id;
  }

  beforeEach(() => {
    dir = makeTempDir('outcome-ledger-');
    store = SqliteStore.open({ dataDir: dir, synchronous: 'NORMAL' });
    full = false;
    now = T0;
    pending = [];
    logs = [];
    changes = [];
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a refused record is kept in order, the lease is extended meanwhile, and it lands once the store takes writes', async () => {
    const ledger = openLedger();
    const id = await claimedDelivery(1);
    full = true;
    const claim = { deliveryId: id, reportId: 1, owner: OWNER };
    expect(
      await ledger.record(claim, { kind: 'route-sent', route: 'default', now: T0 + 10, messageId: '<m1@relay>', response: '250 OK' }),
    ).toBe('held');
    // The store would take this one, but it waits behind the route's record: the delivery is not `sent` before its route.
    full = false;
    expect(await ledger.record(claim, { kind: 'sent', now: T0 + 11, messageId: '<m1@relay>' })).toBe('held');
    expect((await store.getDelivery(id))!.state).toBe('sending');
    expect(ledger.holds(id)).toBe(true);
    expect(ledger.unrecorded).toBe(1);
    expect(ledger.lastError).toEqual({ code: 'SQLITE_FULL', message: expect.stringContaining('full') });

    // Still full when the retry comes: the lease is extended, so another claimer cannot take the delivery.
    full = true;
    now = T0 + 900;
    fireTimers();
    await waitUntil(() => pending.length > 0 || undefined, 5_000, 'the next retry');
    expect(await store.claimDue({ now: T0 + 1_500, limit: 5, owner: 'another-replica', leaseMs: LEASE_MS })).toEqual([]);

    full = false;
    fireTimers();
    await waitUntil(() => ledger.unrecorded === 0 || undefined, 5_000, 'the record to land');
    expect(await store.getDelivery(id)).toMatchObject({ state: 'sent', messageId: '<m1@relay>' });
    expect(await store.listRouteMails([id])).toEqual([
      expect.objectContaining({ state: 'sent', messageId: '<m1@relay>', response: '250 OK' }),
    ]);
    expect(ledger.holds(id)).toBe(false);
    expect(ledger.lastError).toBeUndefined();
    expect(changes).toEqual([1, 0]);
    expect(logs.some((l) => l.msg === 'every held outcome is recorded now')).toBe(true);
  });

  test('a write the store takes at once is recorded at once, and nothing is held', async () => {
    const ledger = openLedger();
    const id = await claimedDelivery(1);
    expect(
      await ledger.record(
        { deliveryId: id, reportId: 1, owner: OWNER },
        { kind: 'dead', now: T0 + 5, error: 'no such user', code: 'SMTP_5XX' },
      ),
    ).toBe('recorded');
    expect(await store.getDelivery(id)).toMatchObject({ state: 'dead', lastErrorCode: 'SMTP_5XX' });
    expect(ledger.unrecorded).toBe(0);
    expect(pending).toEqual([]);
  });

  test('the warning is logged once a minute while outcomes wait, not once per outcome', async () => {
    const ledger = openLedger();
    const ids = [await claimedDelivery(1), await claimedDelivery(2), await claimedDelivery(3)];
    full = true;
    for (const id of ids)
      await ledger.record({ deliveryId: id, reportId: id, owner: OWNER }, { kind: 'sent', now: T0, messageId: `<m${id}@relay>` });
    await ledger.saveReport(makeReport(7, T0, null));
    expect(ledger.unrecorded).toBe(4);
    const warnings = () => logs.filter((l) => l.level === 40 && l.msg.includes('cannot be recorded'));
    expect(warnings()).toHaveLength(1);

    now = T0 + 30_000;
    fireTimers();
    await waitUntil(() => pending.length > 0 || undefined, 5_000, 'the next retry');
    expect(warnings()).toHaveLength(1);
    now = T0 + 61_000;
    fireTimers();
    await waitUntil(() => pending.length > 0 || undefined, 5_000, 'the next retry');
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ unrecorded: 4, code: 'SQLITE_FULL' });

    // The report snapshot (the trend's history) lands with the rest.
    full = false;
    fireTimers();
    await waitUntil(() => ledger.unrecorded === 0 || undefined, 5_000, 'everything recorded');
    expect(await store.findReportBefore(makeReport(7, T0, null).series, { createdMs: T0 + 1, reportId: 0 })).toMatchObject({ reportId: 7 });
  });

  test('a store that fails on and off is warned about once a minute too, not once per recovery', async () => {
    const ledger = openLedger();
    const ids = [await claimedDelivery(1), await claimedDelivery(2), await claimedDelivery(3)];
    const warnings = () => logs.filter((l) => l.level === 40 && l.msg.includes('cannot be recorded'));
    const recoveries = () => logs.filter((l) => l.msg === 'every held outcome is recorded now');
    const episode = async (id: number) => {
      full = true;
      await ledger.record({ deliveryId: id, reportId: id, owner: OWNER }, { kind: 'sent', now, messageId: `<m${id}@relay>` });
      expect(ledger.unrecorded).toBe(1);
      full = false;
      fireTimers();
      await waitUntil(() => ledger.unrecorded === 0 || undefined, 5_000, 'the outcome recorded');
    };

    await episode(ids[0]);
    expect([warnings().length, recoveries().length]).toEqual([1, 1]);
    // A second refusal 20 s later: held and retried as before, but not said again within the minute.
    now += 20_000;
    await episode(ids[1]);
    expect([warnings().length, recoveries().length]).toEqual([1, 1]);
    // A minute after the warning, a new episode is said again, and so is its end.
    now += 45_000;
    await episode(ids[2]);
    expect([warnings().length, recoveries().length]).toEqual([2, 2]);
    expect(await store.getDelivery(ids[1])).toMatchObject({ state: 'sent', messageId: `<m${ids[1]}@relay>` });
  });

  test('at the cap it says so: the worker claims nothing new', async () => {
    const ledger = openLedger(2);
    const ids = [await claimedDelivery(1), await claimedDelivery(2)];
    full = true;
    await ledger.record({ deliveryId: ids[0], reportId: 1, owner: OWNER }, { kind: 'sent', now: T0, messageId: '<m1@relay>' });
    expect(ledger.full).toBe(false);
    await ledger.record({ deliveryId: ids[1], reportId: 2, owner: OWNER }, { kind: 'sent', now: T0, messageId: '<m2@relay>' });
    expect(ledger.full).toBe(true);
    full = false;
    fireTimers();
    await waitUntil(() => !ledger.full || undefined, 5_000, 'room again');
  });

  test('on shutdown it retries until the deadline, then names each delivery whose mail may repeat, with its Message-IDs', async () => {
    const ledger = openLedger();
    const sentOne = await claimedDelivery(1);
    const retried = await claimedDelivery(2);
    full = true;
    await ledger.record(
      { deliveryId: sentOne, reportId: 1, owner: OWNER },
      { kind: 'route-sent', route: 'default', now: T0, messageId: '<m1@relay>', response: '250 OK' },
    );
    await ledger.record({ deliveryId: sentOne, reportId: 1, owner: OWNER }, { kind: 'sent', now: T0, messageId: '<m1@relay>' });
    await ledger.record(
      { deliveryId: retried, reportId: 2, owner: OWNER },
      { kind: 'retry', now: T0, nextAttemptAt: T0 + 60_000, error: 'greylisted', code: 'SMTP_4XX' },
    );

    const settling = ledger.settle(T0 + 1_000);
    // Each retry of the shutdown fails; the clock passes the deadline at the second.
    await waitUntil(() => pending.length > 0 || undefined, 5_000, 'a shutdown retry');
    fireTimers();
    now = T0 + 1_000;
    await waitUntil(() => pending.length > 0 || undefined, 5_000, 'a shutdown retry');
    fireTimers();
    expect(await settling).toBe(2);

    const lines = logs.filter((l) => l.msg.startsWith('shutdown:'));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        deliveryId: sentOne,
        reportId: 1,
        messageIds: ['<m1@relay>'],
        unrecorded: ['route-sent', 'sent'],
        msg: expect.stringContaining('may be mailed again at the next start'),
      }),
      expect.objectContaining({
        level: 50,
        deliveryId: retried,
        messageIds: [],
        unrecorded: ['retry'],
        msg: expect.stringContaining('tried again at the next start'),
      }),
    ]);
  });

  test('on shutdown, what lands before the deadline is recorded and not named', async () => {
    const ledger = openLedger();
    const id = await claimedDelivery(1);
    full = true;
    await ledger.record({ deliveryId: id, reportId: 1, owner: OWNER }, { kind: 'sent', now: T0, messageId: '<m1@relay>' });
    full = false;
    expect(await ledger.settle(T0 + 1_000)).toBe(0);
    expect((await store.getDelivery(id))!.state).toBe('sent');
    expect(logs.filter((l) => l.msg.startsWith('shutdown:'))).toEqual([]);
  });
});

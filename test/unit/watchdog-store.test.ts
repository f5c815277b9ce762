import fs from 'node:fs';
import { SqliteStore } from '../../src/store';
import { buildWatchdogAlert } from '../../src/watchdog';
import { makeTempDir } from '../helpers/relay-harness';

describe('the watchdog state in the store', () => {
  let dir: string;
  let a: SqliteStore;
  let b: SqliteStore;
  beforeEach(() => {
    dir = makeTempDir('watchdog-store-');
    a = SqliteStore.open({ dataDir: dir });
    b = SqliteStore.open({ dataDir: dir });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lets exactly one of two replicas that saw the same state make the transition and queue the mail', async () => {
    const t0 = Date.parse('2026-03-06T08:00:00Z');
    const seenByA = await a.getWatchdogState(t0);
    const seenByB = await b.getWatchdogState(t0 + 5);
    expect(seenByA).toEqual({ state: 'ok', since: null, createdAt: t0, changedAt: t0, version: 0 });
    expect(seenByB).toEqual(seenByA);

    const alert = (detectedAt: number) => buildWatchdogAlert({ kind: 'overdue', silentSince: t0, expectEveryMs: 86_400_000, detectedAt });
    const now = t0 + 90_000_000;
    const [ra, rb] = await Promise.all([
      a.transitionWatchdog({ expectedVersion: seenByA.version, state: 'overdue', since: t0, now, alert: alert(now) }),
      b.transitionWatchdog({ expectedVersion: seenByB.version, state: 'overdue', since: t0, now: now + 1, alert: alert(now + 1) }),
    ]);
    expect([ra.won, rb.won].sort()).toEqual([false, true]);
    expect(await a.getWatchdogState(now)).toMatchObject({ state: 'overdue', since: t0, version: 1 });
    const queued = await b.listDeliveries();
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ dedupKey: 'watchdog:overdue@2026-03-06T08:00:00.000Z', state: 'queued', source: 'watchdog' });
    // Watchdog records are not reports: they do not end a silence.
    expect(await a.lastReportReceivedAt()).toBeNull();
  });
});

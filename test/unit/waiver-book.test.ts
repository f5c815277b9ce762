/**
 * The waiver book as the mail pipeline will use it: the waivers a report made now needs (stored and
 * WAIVERS_FILE's, of its source, in force or ended since the previous report), handed to applyWaivers.
 * On a real SQLite file.
 */
import fs from 'node:fs';
import { createSilentLogger } from '../../src/shared';
import { SqliteStore } from '../../src/store';
import { applyWaivers, buildWaiverEnd, createWaiverBook, DAY_MS, type Waiver } from '../../src/waivers';
import { makeTempDir } from '../helpers/relay-harness';

const NOW = Date.UTC(2026, 10, 27, 9, 0);
const FILE_WAIVER: Waiver = {
  id: 'file:1',
  origin: 'file',
  source: 'default',
  test: 'telnet',
  device: null,
  until: '2027-01-31',
  endsAt: buildWaiverEnd('2027-01-31'),
  reason: 'lab estate',
  author: 'alice',
  createdAt: Date.UTC(2026, 10, 1),
  expiredAt: null,
  expiredBy: null,
};

describe('the waiver book for a report', () => {
  let dataDir: string;
  let store: SqliteStore;
  const clock = { at: NOW, now: () => clock.at };
  beforeEach(() => {
    clock.at = NOW - 2 * DAY_MS;
    dataDir = makeTempDir('waiver-book-');
    store = SqliteStore.open({ dataDir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('hands applyWaivers the waivers of the source in force, and those ended since the previous report', async () => {
    const book = createWaiverBook({
      storage: store,
      fileWaivers: [FILE_WAIVER],
      sources: ['default', 'lab'],
      clock,
      logger: createSilentLogger(),
    });
    const ntp = await book.add({ test: 'ntp', device: 'sw1', until: '2027-01-31', author: 'bob' });
    await book.add({ source: 'lab', test: 'ntp', device: 'sw1', until: '2027-01-31', author: 'bob' });
    const ssh = await book.add({ test: 'ssh', device: 'sw2', until: '2027-01-31', author: 'bob' });
    clock.at = NOW - DAY_MS / 2;
    await book.expire(ssh.id, 'carol');
    clock.at = NOW;

    const waivers = await book.forReport({ source: 'default', previousReportAt: NOW - DAY_MS });
    expect(waivers.map((w) => w.id).sort()).toEqual([ntp.id, ssh.id, 'file:1'].sort());
    const pairs = [
      { device: 'sw1', test: 'ntp', severity: 'MIDDLE' as const },
      { device: 'sw2', test: 'ssh', severity: 'LOW' as const },
      { device: 'sw3', test: 'telnet', severity: 'HIGH' as const },
      { device: 'sw4', test: 'telnet', severity: 'HIGH' as const },
    ];
    const outcome = applyWaivers(pairs, waivers, NOW, { previousReportAt: NOW - DAY_MS });
    expect(outcome.waived.map((m) => [m.pair.device, m.waiver.id])).toEqual([
      ['sw1', ntp.id],
      ['sw3', 'file:1'],
      ['sw4', 'file:1'],
    ]);
    expect(outcome.waiverExpired.map((m) => [m.pair.device, m.waiver.id])).toEqual([['sw2', ssh.id]]);
    expect(outcome.mustName).toEqual([{ waiver: FILE_WAIVER, test: 'telnet', devices: ['sw3', 'sw4'] }]);
    expect(await book.countActive()).toBe(3);
  });
});

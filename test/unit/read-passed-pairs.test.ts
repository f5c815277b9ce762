import { readPassedPairs, type PairToAsk } from '../../src/enrichment';
import { createNetboxClient, NetboxError, type NetboxClient } from '../../src/netbox';
import { startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const TESTS = Array.from({ length: 3 }, (_, i) => ({ id: i + 1, name: `test-${i + 1}`, severity: 'HIGH' as const }));

/** A report of 250 devices × 3 tests; `passed(d, t)` decides each result, `absent(d, t)` leaves it out. */
function buildReport(passed: (device: number, test: number) => boolean, absent: (device: number, test: number) => boolean): ResultSpec[] {
  const results: ResultSpec[] = [];
  for (let d = 1; d <= 250; d += 1)
    for (const test of TESTS)
      if (!absent(d, test.id)) results.push({ id: d * 10 + test.id, test, device: { id: d, name: `sw${d}` }, passed: passed(d, test.id) });
  return results;
}

const ask = (devices: number[], tests: number[]): PairToAsk[] =>
  devices.flatMap((deviceId) => tests.map((testId) => ({ key: `${testId}:${deviceId}`, deviceId, testId })));

describe('readPassedPairs asks NetBox only about the given pairs', () => {
  let netbox: NetboxDouble;
  let client: NetboxClient;
  beforeEach(async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5_000 });
  });
  afterEach(async () => {
    client.close();
    await netbox.close();
  });
  const budget = () => ({ deadline: Date.now() + 10_000 });

  it('answers passed, failed and absent pairs exactly, in blocks of at most 100 ids per filter', async () => {
    netbox.reports.set(7, {
      id: 7,
      created: '2026-03-06T06:00:00Z',
      results: buildReport(
        (d) => d % 2 === 0,
        (d, t) => d % 5 === 0 && t === 1,
      ),
    });
    const pairs = ask(
      Array.from({ length: 250 }, (_, i) => i + 1),
      [1, 2],
    );
    const answer = await readPassedPairs(client, '/api/plugins/validity/test-results/?report_id=7', pairs, budget());
    const expected = pairs.filter((p) => p.deviceId % 2 === 0 && !(p.deviceId % 5 === 0 && p.testId === 1)).map((p) => p.key);
    expect([...answer.passed].sort()).toEqual(expected.sort());
    expect(answer.deletedDevices.size + answer.deletedTests.size).toBe(0);
    // Tests 1 and 2 have the same 250 devices: one block of tests, three of devices.
    const asked = netbox.requests.map((r) => new URL(r.path, 'http://x').searchParams);
    expect(asked).toHaveLength(3);
    expect(asked.every((q) => q.getAll('device_id').length <= 100 && q.get('passed') === 'true')).toBe(true);
    expect(asked.every((q) => q.getAll('test_id').join() === '1,2')).toBe(true);
  });

  it('leaves out the devices and tests NetBox no longer has, and says which', async () => {
    netbox.reports.set(7, {
      id: 7,
      created: '2026-03-06T06:00:00Z',
      results: buildReport(
        () => true,
        () => false,
      ),
    });
    const pairs = [...ask([1, 2, 3, 9001, 4, 9002], [1, 2]), ...ask([5], [77])];
    const answer = await readPassedPairs(client, '/api/plugins/validity/test-results/?report_id=7', pairs, budget());
    expect([...answer.passed].sort()).toEqual(
      ask([1, 2, 3, 4], [1, 2])
        .map((p) => p.key)
        .sort(),
    );
    expect([...answer.deletedDevices].sort()).toEqual([9001, 9002]);
    expect([...answer.deletedTests]).toEqual([77]);
  });

  it('throws when NetBox no longer has the report: nothing can be told', async () => {
    await expect(
      readPassedPairs(client, '/api/plugins/validity/test-results/?report_id=8', ask([1], [1]), budget()),
    ).rejects.toBeInstanceOf(NetboxError);
  });
});

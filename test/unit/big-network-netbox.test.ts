import type { ChildProcess } from 'node:child_process';
import { forkBenchScript, stopChild, waitForMessage } from '../../bench/lib/processes';
import { BIG_CURRENT, BIG_PREVIOUS, BIG_TOKEN } from '../../bench/servers/big-network-netbox';

interface Page {
  count: number;
  next: string | null;
  results: { test: { id: number }; device: { id: number }; passed: boolean; explanation?: unknown }[];
}

// The big-network benchmark's NetBox double (built: npm run build) answers as validity does, so that the
// relay's requests — whatever filters they combine — get what NetBox would give them.
describe('the big-network NetBox double', () => {
  let child: ChildProcess;
  let url: string;
  let reports: Record<number, Record<string, number>>;

  beforeAll(async () => {
    child = forkBenchScript('servers/big-network-netbox.js', { env: { DEVICES: '300', TESTS: '5' } });
    ({ url, reports } = await waitForMessage<{ url: string; reports: Record<number, Record<string, number>> }>(child, 'ready'));
  });
  afterAll(async () => {
    await stopChild(child);
  });

  const get = async (query: string): Promise<{ status: number; body: Page & Record<string, unknown> }> => {
    const res = await fetch(`${url}/api/plugins/validity/test-results/?${query}`, { headers: { Authorization: `Token ${BIG_TOKEN}` } });
    return { status: res.status, body: (await res.json()) as Page & Record<string, unknown> };
  };

  it("counts each report's results as its webhook says, and leaves every 1000th device out of the current one", async () => {
    for (const id of [BIG_PREVIOUS, BIG_CURRENT]) {
      const all = await get(`report_id=${id}&limit=1`);
      const failing = await get(`report_id=${id}&passed=false&limit=1`);
      expect(all.body.count).toBe(reports[id].total_count);
      expect(failing.body.count).toBe(reports[id].total_count - reports[id].total_passed);
    }
    expect(reports[BIG_PREVIOUS].total_count).toBe(1500);
    expect(reports[BIG_CURRENT].total_count).toBe(1500);
  });

  it('ORs repeated ids and ANDs different filters', async () => {
    const one = await get(`report_id=${BIG_PREVIOUS}&passed=true&test_id=1&limit=1000`);
    const two = await get(`report_id=${BIG_PREVIOUS}&passed=true&test_id=2&limit=1000`);
    const both = await get(`report_id=${BIG_PREVIOUS}&passed=true&test_id=1&test_id=2&limit=1000`);
    expect(both.body.count).toBe(one.body.count + two.body.count);
    expect(both.body.results.every((r) => r.passed && [1, 2].includes(r.test.id))).toBe(true);
    const pair = await get(`report_id=${BIG_PREVIOUS}&report_id=${BIG_CURRENT}&test_id=3&device_id=100007&device_id=100008`);
    expect(pair.body.count).toBe(4);
    expect(pair.body.results.every((r) => r.test.id === 3 && [100007, 100008].includes(r.device.id))).toBe(true);
  });

  it('pages at 1,000 at most with an absolute next, and refuses ids NetBox does not have', async () => {
    const page = await get('limit=5000');
    expect(page.body.results).toHaveLength(1000);
    expect(page.body.next).toMatch(/^http:\/\/netbox\.internal:8000\/.*offset=1000/);
    expect((await get(`report_id=${BIG_CURRENT}&device_id=100301`)).status).toBe(400);
    expect((await get(`report_id=${BIG_CURRENT}&test_id=6`)).body).toEqual({
      test_id: ['Select a valid choice. 6 is not one of the available choices.'],
    });
    expect((await get('report_id=9')).status).toBe(400);
  });

  it('sends explanations unless asked to omit them', async () => {
    const explained = (await get(`report_id=${BIG_CURRENT}&limit=1`)).body.results[0].explanation;
    expect(JSON.stringify(explained).length).toBeGreaterThan(1000);
    expect((await get(`report_id=${BIG_CURRENT}&limit=1&omit=explanation`)).body.results[0]).not.toHaveProperty('explanation');
  });
});

/**
 * A validity API double for large reports, in its own process: DEVICES × TESTS results per report,
 * computed from (report, test, device) instead of stored, indexed as NetBox's database is (by report,
 * test, device), and serialized exactly as validity serializes a result (test/helpers'
 * renderResult, explanations omitted). Reports (ids below) differ in which pairs fail and which
 * devices have no result. Serves the report detail and `test-results/` with `report_id`, `passed`,
 * repeatable `test_id`/`device_id` (400 for an id NetBox does not have), `limit`/`offset`.
 * `GET /bench/requests` answers how many results requests it served. IPC: `ready {url}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderResult } from '../../test/helpers/validity-results-double';

export const GRID_TOKEN = '0123456789abcdef0123456789abcdef01234567';
/** The previous report: 1 % of its pairs fail. */
export const GRID_PREVIOUS = 601;
/** This report, a typical change: a tenth of the failing pairs fixed or new, 5 devices not evaluated. */
export const GRID_TYPICAL = 602;
/** This report, the worst change: another 1 % fails, so every failing pair of either report changed. */
export const GRID_WORST = 603;
export const GRID_CREATED: Record<number, string> = {
  [GRID_PREVIOUS]: '2026-03-05T06:00:00.000000Z',
  [GRID_TYPICAL]: '2026-03-06T06:00:00.000000Z',
  [GRID_WORST]: '2026-03-07T06:00:00.000000Z',
};
const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;

/** A well-spread hash of (salt, test, device) in [0, 100). */
function bucket(salt: number, test: number, device: number): number {
  let h = (salt * 374761393 + test * 668265263 + device * 2147483647) | 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) % 100;
}

/** Whether (test, device) fails in a report; undefined when the report has no result for it. */
export function gridFails(report: number, test: number, device: number, devices: number): boolean | undefined {
  if (report === GRID_TYPICAL && device > devices - 5) return undefined;
  const before = bucket(1, test, device) === 0;
  if (report === GRID_PREVIOUS) return before;
  if (report === GRID_WORST) return bucket(2, test, device) === 0 && !before;
  // A tenth of the pairs that failed pass now, and as many new ones fail.
  if (before) return bucket(3, test, device) >= 10;
  return bucket(1, test, device) === 1 && bucket(3, test, device) < 10;
}

function main(): void {
  const devices = Number(process.env.DEVICES ?? 10_000);
  const tests = Number(process.env.TESTS ?? 50);
  const failingOf = new Map<number, [number, number][]>();
  for (const report of [GRID_PREVIOUS, GRID_TYPICAL, GRID_WORST]) {
    const failing: [number, number][] = [];
    for (let d = 1; d <= devices; d += 1) for (let t = 1; t <= tests; t += 1) if (gridFails(report, t, d, devices)) failing.push([t, d]);
    failingOf.set(report, failing);
  }
  let served = 0;
  const publicOrigin = 'http://netbox.internal:8000';
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const render = (report: number, t: number, d: number, passed: boolean) => {
    const result = renderResult(
      {
        id: report * 1_000_000 + t * 10_000 + d,
        test: { id: t, name: `test-${t}`, severity: SEVERITIES[t % 3] },
        device: { id: 100_000 + d, name: `sw-${d}` },
        passed,
      },
      report,
      publicOrigin,
      '',
    );
    delete result.explanation;
    return result;
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    if (req.headers.authorization !== `Token ${GRID_TOKEN}`) return json(res, 403, { detail: 'Invalid token' });
    if (url.pathname === '/bench/requests') return json(res, 200, { count: served });
    const detail = /^\/api\/plugins\/validity\/reports\/(\d+)\/$/.exec(url.pathname);
    if (detail) {
      const id = Number(detail[1]);
      return GRID_CREATED[id] ? json(res, 200, { id, created: GRID_CREATED[id] }) : json(res, 404, { detail: 'Not found.' });
    }
    if (url.pathname !== '/api/plugins/validity/test-results/') return json(res, 404, { detail: 'Not found.' });
    served += 1;
    const report = Number(url.searchParams.get('report_id'));
    if (!failingOf.has(report))
      return json(res, 400, { report_id: [`Select a valid choice. ${report} is not one of the available choices.`] });
    const testIds = url.searchParams.getAll('test_id').map(Number);
    const deviceIds = url.searchParams.getAll('device_id').map((id) => Number(id) - 100_000);
    const badTest = testIds.find((t) => !(t >= 1 && t <= tests));
    if (badTest !== undefined)
      return json(res, 400, { test_id: [`Select a valid choice. ${badTest} is not one of the available choices.`] });
    const badDevice = deviceIds.find((d) => !(d >= 1 && d <= devices));
    if (badDevice !== undefined)
      return json(res, 400, { device_id: [`Select a valid choice. ${badDevice + 100_000} is not one of the available choices.`] });
    const passed = url.searchParams.get('passed');
    let rows: [number, number, boolean][];
    if (testIds.length && deviceIds.length) {
      rows = [];
      for (const d of [...deviceIds].sort((a, b) => a - b))
        for (const t of testIds) {
          const fails = gridFails(report, t, d, devices);
          if (fails !== undefined && (passed === null || String(!fails) === passed)) rows.push([t, d, !fails]);
        }
    } else if (passed === 'false' && !testIds.length && !deviceIds.length) {
      rows = failingOf.get(report)!.map(([t, d]) => [t, d, false]);
    } else {
      return json(res, 501, { detail: 'the bench double serves failing results or test_id × device_id blocks only' });
    }
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), 1000);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const next = offset + limit < rows.length ? new URL(`${publicOrigin}${url.pathname}${url.search}`) : null;
    next?.searchParams.set('offset', String(offset + limit));
    next?.searchParams.set('limit', String(limit));
    json(res, 200, {
      count: rows.length,
      next: next?.href ?? null,
      previous: null,
      results: rows.slice(offset, offset + limit).map(([t, d, p]) => render(report, t, d, p)),
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.send!({ type: 'ready', url: `http://127.0.0.1:${port}` });
  });
}

if (require.main === module) main();

/**
 * A NetBox + validity double for a big network, in its own process: two reports of DEVICES × TESTS
 * results, computed from (report, test, device) rather than stored, serialized as validity does
 * (test/helpers' renderResult), each with EXPLANATION_BYTES of explanation unless the request says
 * `omit=explanation` (HONOURS_OMIT=false: NetBox < 4.5.2, which sends them anyway). The previous report fails 1 % of its pairs; in the current one about 1 % of those
 * failures changed (some pass now, as many new ones fail) and every 1,000th device has no result at all
 * (not evaluated). `test-results/` applies validity's filters as django-filter does — different filters
 * AND-ed, a repeated one (`report_id`, `test_id`, `device_id`) OR-ed; an id NetBox does not have refuses
 * the request with 400 — with limit/offset paging clamped at 1,000 and an absolute `next`.
 * IPC: `ready {url, reports: {id: webhook counts}, changes: {fixed, notEvaluated, newlyFailing, stillFailing}}`; `{type:'requests'}` → `requests {paths}`: every
 * request path (with its query) since the previous `requests` message.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderResult } from '../../test/helpers/validity-results-double';

export const BIG_TOKEN = '0123456789abcdef0123456789abcdef01234567';
export const BIG_PREVIOUS = 701;
export const BIG_CURRENT = 702;
export const BIG_CREATED: Record<number, string> = {
  [BIG_PREVIOUS]: '2026-03-05T06:00:00.000000Z',
  [BIG_CURRENT]: '2026-03-06T06:00:00.000000Z',
};
const DEVICE_ID_BASE = 100_000;
const MAX_PAGE_SIZE = 1000;
const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;
const PUBLIC_ORIGIN = 'http://netbox.internal:8000';

/** A well-spread hash of (salt, test, device) in [0, 100). */
function bucket(salt: number, test: number, device: number): number {
  let h = (salt * 374761393 + test * 668265263 + device * 2147483647) | 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) % 100;
}

/** Whether (test, device) passes in `report`; undefined when the report has no result for it. */
function passesIn(report: number, test: number, device: number): boolean | undefined {
  const failedBefore = bucket(1, test, device) === 0;
  if (report === BIG_PREVIOUS) return !failedBefore;
  if (device % 1000 === 0) return undefined;
  // One failing pair in a hundred passes now, and about as many that passed fail.
  if (failedBefore) return bucket(3, test, device) === 0;
  return !(bucket(1, test, device) === 1 && bucket(3, test, device) === 0);
}

interface Query {
  reports: number[];
  tests: number[];
  devices: number[];
  passed: string | null;
  severity: string | null;
}

const severityOf = (test: number) => SEVERITIES[test % 3];

/** Calls `visit` for every result matching `q`, in (report, device, test) order. */
function forEachResult(q: Query, visit: (report: number, test: number, device: number, passed: boolean) => void): void {
  for (const report of q.reports)
    for (const device of q.devices)
      for (const test of q.tests) {
        const passed = passesIn(report, test, device);
        if (passed === undefined || (q.passed !== null && String(passed) !== q.passed)) continue;
        if (q.severity !== null && severityOf(test) !== q.severity) continue;
        visit(report, test, device, passed);
      }
}

/** The webhook's counts for a report, as validity computes them. */
function countReport(report: number, tests: number, devices: number): Record<string, number> {
  const counts: Record<string, number> = { total_passed: 0, total_count: 0, low_passed: 0, low_count: 0 };
  Object.assign(counts, { middle_passed: 0, middle_count: 0, high_passed: 0, high_count: 0 });
  const evaluated = new Set<number>();
  const all = { reports: [report], tests: range(tests), devices: range(devices), passed: null, severity: null };
  forEachResult(all, (_r, test, device, passed) => {
    const level = severityOf(test).toLowerCase();
    evaluated.add(device);
    counts.total_count += 1;
    counts[`${level}_count`] += 1;
    if (passed) {
      counts.total_passed += 1;
      counts[`${level}_passed`] += 1;
    }
  });
  return { ...counts, device_count: evaluated.size, test_count: tests };
}

/** How the current report's failures differ from the previous one's, pair by pair. */
function countChanges(tests: number, devices: number): Record<string, number> {
  const changes = { fixed: 0, notEvaluated: 0, newlyFailing: 0, stillFailing: 0 };
  for (let device = 1; device <= devices; device += 1)
    for (let test = 1; test <= tests; test += 1) {
      const before = passesIn(BIG_PREVIOUS, test, device);
      const now = passesIn(BIG_CURRENT, test, device);
      if (before === false && now === true) changes.fixed += 1;
      else if (before === false && now === undefined) changes.notEvaluated += 1;
      else if (before === false) changes.stillFailing += 1;
      else if (now === false) changes.newlyFailing += 1;
    }
  return changes;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

function main(): void {
  const devices = Number(process.env.DEVICES ?? 10_000);
  const tests = Number(process.env.TESTS ?? 50);
  const explanationBytes = Number(process.env.EXPLANATION_BYTES ?? 2_000);
  // NetBox < 4.5.2 has no ?omit and sends every explanation anyway.
  const honoursOmit = process.env.HONOURS_OMIT !== 'false';
  let paths: string[] = [];
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const refuse = (res: http.ServerResponse, name: string, id: number) =>
    json(res, 400, { [name]: [`Select a valid choice. ${id} is not one of the available choices.`] });
  const render = (report: number, test: number, device: number, passed: boolean, omit: boolean) => {
    const result = renderResult(
      {
        id: report * 1_000_000 + device * 100 + test,
        test: { id: test, name: `test-${test}`, severity: severityOf(test) },
        device: { id: DEVICE_ID_BASE + device, name: `sw-${String(device).padStart(5, '0')}` },
        passed,
        explanationBytes: omit ? 0 : explanationBytes,
      },
      report,
      PUBLIC_ORIGIN,
      '',
    );
    if (omit) delete result.explanation;
    return result;
  };
  const listResults = (url: URL, res: http.ServerResponse) => {
    const reports = url.searchParams.getAll('report_id').map(Number);
    const badReport = reports.find((id) => !BIG_CREATED[id]);
    if (badReport !== undefined) return refuse(res, 'report_id', badReport);
    const testIds = url.searchParams.getAll('test_id').map(Number);
    const badTest = testIds.find((t) => !(t >= 1 && t <= tests));
    if (badTest !== undefined) return refuse(res, 'test_id', badTest);
    const deviceIds = url.searchParams.getAll('device_id').map((id) => Number(id) - DEVICE_ID_BASE);
    const badDevice = deviceIds.find((d) => !(d >= 1 && d <= devices));
    if (badDevice !== undefined) return refuse(res, 'device_id', badDevice + DEVICE_ID_BASE);
    const q: Query = {
      reports: reports.length ? [...new Set(reports)].sort((a, b) => a - b) : [BIG_PREVIOUS, BIG_CURRENT],
      tests: testIds.length ? [...new Set(testIds)].sort((a, b) => a - b) : range(tests),
      devices: deviceIds.length ? [...new Set(deviceIds)].sort((a, b) => a - b) : range(devices),
      passed: url.searchParams.get('passed'),
      severity: url.searchParams.get('severity'),
    };
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), MAX_PAGE_SIZE);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const omit = honoursOmit && url.searchParams.get('omit') === 'explanation';
    let count = 0;
    const page: unknown[] = [];
    forEachResult(q, (report, test, device, passed) => {
      if (count >= offset && count < offset + limit) page.push(render(report, test, device, passed, omit));
      count += 1;
    });
    const next = offset + limit < count ? new URL(`${PUBLIC_ORIGIN}${url.pathname}${url.search}`) : null;
    next?.searchParams.set('offset', String(offset + limit));
    next?.searchParams.set('limit', String(limit));
    json(res, 200, { count, next: next?.href ?? null, previous: null, results: page });
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    paths.push(`${url.pathname}${url.search}`);
    if (!req.headers.authorization) return json(res, 403, { detail: 'Authentication credentials were not provided.' });
    if (req.headers.authorization !== `Token ${BIG_TOKEN}`) return json(res, 403, { detail: 'Invalid token' });
    if (url.pathname === '/api/status/') return json(res, 200, { 'netbox-version': '4.6.2', plugins: { validity: '3.5.2' } });
    const detail = /^\/api\/plugins\/validity\/reports\/(\d+)\/$/.exec(url.pathname);
    if (detail) {
      const id = Number(detail[1]);
      if (!BIG_CREATED[id]) return json(res, 404, { detail: 'No ComplianceReport matches the given query.' });
      const api = `${PUBLIC_ORIGIN}/api/plugins/validity`;
      return json(res, 200, { id, url: `${api}/reports/${id}/`, display: `report-${id}`, created: BIG_CREATED[id] });
    }
    if (url.pathname === '/api/plugins/validity/test-results/') return listResults(url, res);
    json(res, 404, { detail: 'Not found.' });
  });
  const counted = Object.fromEntries([BIG_PREVIOUS, BIG_CURRENT].map((id) => [id, countReport(id, tests, devices)]));
  process.on('message', (message: { type?: string }) => {
    if (message?.type !== 'requests') return;
    process.send!({ type: 'requests', paths });
    paths = [];
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, reports: counted, changes: countChanges(tests, devices) });
  });
}

if (require.main === module) main();

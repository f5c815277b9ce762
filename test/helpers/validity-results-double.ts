import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test result exactly as validity's API serializes it (NETBOX.md). */
export interface ResultSpec {
  id: number;
  test: { id: number; name: string; severity: 'LOW' | 'MIDDLE' | 'HIGH' };
  device: { id: number; name: string };
  passed: boolean;
  /** Bytes of explanation to generate (NetBox < 4.5.2 ignores ?omit=explanation). */
  explanationBytes?: number;
}

interface DoubleReport {
  id: number;
  created: string;
  results: ResultSpec[];
  /** Fields served instead of those derived from the results (a report the relay must refuse, say). */
  fields?: Record<string, unknown>;
}

/** A NetBox object nested in a device (site, tenant, role, platform, tag). */
interface RefSpec {
  id: number;
  name: string;
  slug: string;
}

/** A device as `/api/dcim/devices/` serves it (3.x: `device_role`, 4.x: `role`). */
interface DeviceSpec {
  id: number;
  name: string;
  site: RefSpec;
  tenant?: RefSpec | null;
  role: RefSpec;
  platform?: RefSpec | null;
  tags?: RefSpec[];
}

/** A contact (`/api/tenancy/contacts/`, with its e-mail) and its assignments. */
interface ContactSpec {
  id: number;
  name: string;
  email: string;
}

interface AssignmentSpec {
  id: number;
  /** `dcim.device`, `dcim.site`, `tenancy.tenant`. */
  objectType: string;
  objectId: number;
  contactId: number;
  role: RefSpec;
  priority: 'primary' | 'secondary' | 'tertiary' | 'inactive' | '';
}

export interface NetboxDoubleOptions {
  /** NetBox's version (`/api/status/`); contact assignments use 3.x or 4.x field names and filters. Default 4.6.2. */
  version?: string;
  /** validity's version (`/api/status/`): from 3.0 its reports list honours `created__gt`. Default 3.5.2. */
  validityVersion?: string;
  /** NetBox's MAX_PAGE_SIZE: larger `limit`s are clamped silently (default 1000). */
  maxPageSize?: number;
  /** Accepted Authorization header value ("Token <hex>" or "Bearer nbt_..."). */
  authorization: string;
  /** NetBox's BASE_PATH ('' or '/netbox'). */
  basePath?: string;
  /** The host NetBox believes it has (as behind a proxy): `next` links are built on it. */
  publicOrigin?: string;
  /** Whether ?omit=explanation is honoured (NetBox ≥ 4.5.2). */
  honoursOmit?: boolean;
  /** Accept connections from this address only (NetBox behind a firewall that lets only the proxy in); others are cut. */
  onlyFrom?: string;
  /** Delay, in ms, before answering every request (a real NetBox's pace), unless a slower one is set for it. */
  latencyMs?: number;
}

export interface NetboxDouble {
  /** http://127.0.0.1:<port>, plus the base path. */
  url: string;
  reports: Map<number, DoubleReport>;
  requests: { path: string; authorization?: string; accept?: string }[];
  /** Statuses to answer the next requests with (then normal service). */
  failNext: number[];
  /** Delay, in ms, before answering a results page at this offset (headers included). */
  slowOffsets: Map<number, number>;
  /** Delay, in ms, before answering any request to this path (without the base path, e.g. `/api/tenancy/contact-assignments/`). */
  slowPaths: Map<string, number>;
  /** Delay, in ms, before answering a request whose query has this parameter and value (`passed=true`). */
  slowQueries: Map<string, number>;
  /** Requests to this path (without the base path) are answered only once the promise settles. */
  gates: Map<string, Promise<unknown>>;
  /** Answers a request (path and query, without the base path) with this HTTP status instead, while it returns one. */
  failWhen: ((path: string) => number | undefined) | null;
  /** The requests (path and query) held by a gate, as they arrived. */
  held: string[];
  devices: Map<number, DeviceSpec>;
  contacts: Map<number, ContactSpec>;
  assignments: AssignmentSpec[];
  /** Paths (without the base path) the token's user may not view: NetBox's 403 for a missing permission. */
  forbidden: Set<string>;
  close(): Promise<void>;
}

/**
 * A report as validity's API serializes it (NETBOX.md "The report"): its counts from its results, and
 * `url`/`results_url` absolute on the host NetBox believes it has (the webhook's are relative).
 */
function renderReport(report: DoubleReport, api: string): Record<string, unknown> {
  const count = (results: ResultSpec[]) => ({ passed: results.filter((r) => r.passed).length, count: results.length });
  const of = (severity: string) => count(report.results.filter((r) => r.test.severity === severity));
  const [total, high, middle, low] = [count(report.results), of('HIGH'), of('MIDDLE'), of('LOW')];
  return {
    id: report.id,
    url: `${api}/reports/${report.id}/`,
    display: `report-${report.id}`,
    device_count: new Set(report.results.map((r) => r.device.id)).size,
    test_count: new Set(report.results.map((r) => r.test.id)).size,
    total_passed: total.passed,
    total_count: total.count,
    low_passed: low.passed,
    low_count: low.count,
    middle_passed: middle.passed,
    middle_count: middle.count,
    high_passed: high.passed,
    high_count: high.count,
    results_url: `${api}/test-results/?report_id=${report.id}`,
    custom_fields: {},
    created: report.created,
    last_updated: report.created,
    ...report.fields,
  };
}

/** Builds the API representation of a result, with a large explanation when asked. */
export function renderResult(r: ResultSpec, reportId: number, origin: string, basePath: string): Record<string, unknown> {
  const api = `${origin}${basePath}/api`;
  const explanation: [string, string][] = [];
  let size = 0;
  for (let i = 0; size < (r.explanationBytes ?? 0); i += 1) {
    const line: [string, string] = [`jq '.interfaces[${i}].mtu' == 9000`, `got ${'x'.repeat(200)}`];
    explanation.push(line);
    size += 230;
  }
  return {
    id: r.id,
    url: `${api}/plugins/validity/test-results/${r.id}/`,
    display: `${r.test.name}::${r.device.name}::${r.passed ? 'passed' : 'failed'}`,
    test: {
      id: r.test.id,
      url: `${api}/plugins/validity/tests/${r.test.id}/`,
      display: r.test.name,
      name: r.test.name,
      severity: r.test.severity,
    },
    device: { id: r.device.id, url: `${api}/dcim/devices/${r.device.id}/`, display: r.device.name, name: r.device.name, description: '' },
    dynamic_pair: null,
    report: { id: reportId, url: `${api}/plugins/validity/reports/${reportId}/`, display: `report-${reportId}` },
    passed: r.passed,
    explanation,
    custom_fields: {},
    created: '2026-03-06T15:11:20.000000Z',
    last_updated: '2026-03-06T15:11:20.000000Z',
  };
}

/**
 * A NetBox + validity API double on a real listener (port 0): token check (403 {"detail"}), reports list
 * (newest first, `?ordering=`, paged) and detail (404 when unknown), results list with NetBox's filters
 * (`test_id` and `device_id` repeatable) and limit/offset pagination whose `next` is absolute on NetBox's own
 * idea of its host, 400 for an unknown report_id, test_id or device_id (a device or test is known while some
 * report has a result of it).
 */
export async function startNetboxDouble(options: NetboxDoubleOptions): Promise<NetboxDouble> {
  const basePath = options.basePath ?? '';
  const publicOrigin = options.publicOrigin ?? 'http://netbox.internal:8000';
  const reports = new Map<number, DoubleReport>();
  const requests: NetboxDouble['requests'] = [];
  const failNext: number[] = [];
  const slowOffsets = new Map<number, number>();
  const slowPaths = new Map<string, number>();
  const slowQueries = new Map<string, number>();
  const gates = new Map<string, Promise<unknown>>();
  const held: string[] = [];
  let failWhen: NetboxDouble['failWhen'] = null;
  const devices = new Map<number, DeviceSpec>();
  const contacts = new Map<number, ContactSpec>();
  const assignments: AssignmentSpec[] = [];
  const forbidden = new Set<string>();
  const version = options.version ?? '4.6.2';
  const v4 = Number.parseInt(version, 10) >= 4;
  const validityVersion = options.validityVersion ?? '3.5.2';
  const filtersReports = Number.parseInt(validityVersion, 10) >= 3;
  const maxPageSize = options.maxPageSize ?? 1000;
  /** One page of a list as NetBox paginates it: limit clamped to MAX_PAGE_SIZE, absolute `next`. */
  const page = (url: URL, rows: unknown[]) => {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), maxPageSize);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const next = offset + limit < rows.length ? new URL(`${publicOrigin}${url.pathname}${url.search}`) : null;
    next?.searchParams.set('offset', String(offset + limit));
    next?.searchParams.set('limit', String(limit));
    return { count: rows.length, next: next?.href ?? null, previous: null, results: rows.slice(offset, offset + limit) };
  };
  const ids = (url: URL, name: string) => url.searchParams.getAll(name).map(Number);
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server = http.createServer((req, res) => {
    const requested = new URL(req.url ?? '/', 'http://double');
    const gate = gates.get(requested.pathname.slice(basePath.length));
    if (gate) {
      held.push(req.url ?? '/');
      void gate.then(() => {
        if (!res.destroyed) handle(req, res);
      });
      return;
    }
    const delay =
      slowPaths.get(requested.pathname.slice(basePath.length)) ??
      [...requested.searchParams].map(([name, value]) => slowQueries.get(`${name}=${value}`)).find((d) => d !== undefined) ??
      options.latencyMs;
    if (delay === undefined) return handle(req, res);
    const timer = setTimeout(() => {
      if (!res.destroyed) handle(req, res);
    }, delay);
    res.on('close', () => clearTimeout(timer));
  });
  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://double');
    requests.push({ path: `${url.pathname}${url.search}`, authorization: req.headers.authorization, accept: req.headers.accept });
    const failure = failNext.shift() ?? failWhen?.(`${url.pathname.slice(basePath.length)}${url.search}`);
    if (failure !== undefined) {
      res.writeHead(failure, { 'Content-Type': 'text/html' });
      res.end(`<html><body><h1>${failure} Bad Gateway</h1></body></html>`);
      return;
    }
    if (!req.headers.authorization) return json(res, 403, { detail: 'Authentication credentials were not provided.' });
    if (req.headers.authorization !== options.authorization) return json(res, 403, { detail: 'Invalid token' });
    if (forbidden.has(url.pathname.slice(basePath.length)))
      return json(res, 403, { detail: 'You do not have permission to perform this action.' });
    const api = `${basePath}/api/plugins/validity`;
    const reportMatch = new RegExp(`^${api}/reports/(\\d+)/$`).exec(url.pathname);
    if (reportMatch) {
      const report = reports.get(Number(reportMatch[1]));
      if (!report) return json(res, 404, { detail: 'No ComplianceReport matches the given query.' });
      return json(res, 200, renderReport(report, `${publicOrigin}${api}`));
    }
    if (url.pathname === `${api}/reports/`) {
      // validity's model orders by -created; NetBox's ?ordering= applies; validity ≥ 3.0's filterset has
      // created__gt, older validity has none (django ignores the parameter).
      const ordering = url.searchParams.get('ordering') ?? '-created';
      const key = ordering.replace(/^-/, '') as 'created' | 'id';
      const sign = ordering.startsWith('-') ? -1 : 1;
      const createdAfter = filtersReports ? url.searchParams.get('created__gt') : null;
      const rows = [...reports.values()]
        .filter((r) => createdAfter === null || toMicroseconds(r.created) > toMicroseconds(createdAfter))
        .sort((a, b) => sign * (key === 'id' ? a.id - b.id : Date.parse(a.created) - Date.parse(b.created) || a.id - b.id))
        .map((r) => renderReport(r, `${publicOrigin}${api}`));
      return json(res, 200, page(url, rows));
    }
    if (url.pathname === `${basePath}/api/status/`) {
      return json(res, 200, { 'netbox-version': version, plugins: { validity: validityVersion }, 'python-version': '3.12.3' });
    }
    if (url.pathname === `${basePath}/api/dcim/devices/`) {
      const [wanted, sites, tenants] = [ids(url, 'id'), ids(url, 'site_id'), ids(url, 'tenant_id')];
      const rows = [...devices.values()]
        .filter((d) => wanted.length === 0 || wanted.includes(d.id))
        .filter(
          (d) =>
            (sites.length === 0 || sites.includes(d.site.id)) &&
            (tenants.length === 0 || (d.tenant != null && tenants.includes(d.tenant.id))),
        )
        .map((d) =>
          url.searchParams.get('brief')
            ? { id: d.id, url: `http://netbox.internal:8000/api/dcim/devices/${d.id}/`, display: d.name, name: d.name }
            : renderDevice(d, v4),
        );
      return json(res, 200, page(url, rows));
    }
    if (url.pathname === `${basePath}/api/tenancy/contacts/`) {
      const wanted = ids(url, 'id');
      const rows = [...contacts.values()]
        .filter((c) => wanted.length === 0 || wanted.includes(c.id))
        .map((c) => ({ id: c.id, display: c.name, name: c.name, title: '', phone: '', email: c.email, address: '', tags: [] }));
      return json(res, 200, page(url, rows));
    }
    if (url.pathname === `${basePath}/api/tenancy/contact-assignments/`) {
      // Like django-filter, a version ignores the other version's filter name (a 3.x NetBox ignores object_type).
      const typeFilter = url.searchParams.get(v4 ? 'object_type' : 'content_type');
      const objectIds = ids(url, 'object_id');
      const role = url.searchParams.get('role');
      const priority = url.searchParams.get('priority');
      const rows = assignments
        .filter((a) => (typeFilter === null || a.objectType === typeFilter) && (objectIds.length === 0 || objectIds.includes(a.objectId)))
        .filter((a) => (role === null || a.role.slug === role) && (priority === null || a.priority === priority))
        .map((a) => renderAssignment(a, contacts.get(a.contactId), v4));
      return json(res, 200, page(url, rows));
    }
    if (url.pathname === `${api}/test-results/`) {
      // Without the report_id filter NetBox lists every result (of every report).
      const filtered = url.searchParams.has('report_id');
      const reportId = Number(url.searchParams.get('report_id'));
      const report = filtered ? reports.get(reportId) : { id: 0, created: '', results: [...reports.values()].flatMap((r) => r.results) };
      if (!report)
        return json(res, 400, {
          report_id: [`Select a valid choice. ${url.searchParams.get('report_id')} is not one of the available choices.`],
        });
      const passed = url.searchParams.get('passed');
      const severity = url.searchParams.get('severity');
      const deviceIds = ids(url, 'device_id');
      const testIds = ids(url, 'test_id');
      // validity's test_id and device_id are ModelMultipleChoiceFilters over every test and device in
      // NetBox: one id NetBox does not have (deleted, and its results with it) refuses the whole request.
      const everyResult = [...reports.values()].flatMap((r) => r.results);
      const refused = (name: string, wanted: number[], known: Set<number>) => {
        const unknown = wanted.find((id) => !known.has(id));
        if (unknown === undefined) return false;
        json(res, 400, { [name]: [`Select a valid choice. ${unknown} is not one of the available choices.`] });
        return true;
      };
      if (refused('test_id', testIds, new Set(everyResult.map((r) => r.test.id)))) return;
      if (refused('device_id', deviceIds, new Set([...everyResult.map((r) => r.device.id), ...devices.keys()]))) return;
      const rows = report.results
        .filter((r) => passed === null || String(r.passed) === passed)
        .filter((r) => (severity === null || r.test.severity === severity) && (deviceIds.length === 0 || deviceIds.includes(r.device.id)))
        .filter((r) => testIds.length === 0 || testIds.includes(r.test.id));
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), 1000);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const omit = options.honoursOmit !== false && url.searchParams.get('omit') === 'explanation';
      const page = rows.slice(offset, offset + limit).map((r) => {
        const rendered = renderResult(r, report.id, publicOrigin, basePath);
        if (omit) delete rendered.explanation;
        return rendered;
      });
      const next = offset + limit < rows.length ? new URL(`${publicOrigin}${url.pathname}${url.search}`) : null;
      next?.searchParams.set('offset', String(offset + limit));
      next?.searchParams.set('limit', String(limit));
      const body = { count: rows.length, next: next?.href ?? null, previous: null, results: page };
      const delay = slowOffsets.get(offset) ?? 0;
      const timer = setTimeout(() => {
        if (!res.destroyed) json(res, 200, body);
      }, delay);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    json(res, 404, { detail: 'Not found.' });
  };
  if (options.onlyFrom !== undefined)
    server.on('connection', (socket) => {
      if (socket.remoteAddress !== options.onlyFrom) socket.destroy();
    });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    reports,
    requests,
    failNext,
    slowOffsets,
    slowPaths,
    slowQueries,
    gates,
    held,
    get failWhen() {
      return failWhen;
    },
    set failWhen(next) {
      failWhen = next;
    },
    devices,
    contacts,
    assignments,
    forbidden,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A timestamp to the microsecond, as NetBox compares them (JavaScript's Date keeps milliseconds). */
function toMicroseconds(timestamp: string): number {
  const fraction = (/\.(\d+)/.exec(timestamp)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return Math.floor(Date.parse(timestamp) / 1000) * 1_000_000 + Number(fraction);
}

function renderRef(ref: RefSpec | null | undefined): Record<string, unknown> | null {
  return ref
    ? { id: ref.id, url: `http://netbox.internal:8000/api/x/${ref.id}/`, display: ref.name, name: ref.name, slug: ref.slug }
    : null;
}

/** A device as NetBox serializes it: 4.x `role`, 3.x `device_role` (the name 3.6 deprecated). */
function renderDevice(d: DeviceSpec, v4: boolean): Record<string, unknown> {
  return {
    id: d.id,
    url: `http://netbox.internal:8000/api/dcim/devices/${d.id}/`,
    display: d.name,
    name: d.name,
    [v4 ? 'role' : 'device_role']: renderRef(d.role),
    tenant: renderRef(d.tenant),
    platform: renderRef(d.platform),
    site: renderRef(d.site),
    status: { value: 'active', label: 'Active' },
    tags: (d.tags ?? []).map((t) => ({ ...renderRef(t), color: '9e9e9e' })),
    custom_fields: {},
  };
}

/** A contact assignment: 4.x `object_type`, 3.x `content_type`; the contact brief has no e-mail. */
function renderAssignment(a: AssignmentSpec, contact: ContactSpec | undefined, v4: boolean): Record<string, unknown> {
  return {
    id: a.id,
    url: `http://netbox.internal:8000/api/tenancy/contact-assignments/${a.id}/`,
    display: contact?.name ?? String(a.contactId),
    [v4 ? 'object_type' : 'content_type']: a.objectType,
    object_id: a.objectId,
    object: { id: a.objectId, display: `object ${a.objectId}` },
    contact: {
      id: a.contactId,
      url: `http://netbox.internal:8000/api/tenancy/contacts/${a.contactId}/`,
      display: contact?.name ?? '',
      name: contact?.name ?? '',
    },
    role: renderRef(a.role),
    priority: a.priority ? { value: a.priority, label: a.priority[0].toUpperCase() + a.priority.slice(1) } : null,
    tags: [],
    custom_fields: {},
  };
}

/** `n` results of one report: test i % tests, device i, failing where `fails(i)`. */
export function buildResults(
  n: number,
  options: { firstId?: number; fails: (i: number) => boolean; tests?: ResultSpec['test'][]; explanationBytes?: number },
): ResultSpec[] {
  const tests = options.tests ?? [{ id: 1, name: 'ntp-servers', severity: 'HIGH' as const }];
  return Array.from({ length: n }, (_, i) => ({
    id: (options.firstId ?? 1000) + i,
    test: tests[i % tests.length],
    device: { id: 100 + i, name: `sw-${String(i).padStart(3, '0')}` },
    passed: !options.fails(i),
    explanationBytes: options.explanationBytes,
  }));
}

/** The webhook's counts for a list of results, as validity computes them (passed/count per severity). */
export function countResults(results: ResultSpec[]): Record<string, number> {
  const counts: Record<string, number> = {
    total_passed: 0,
    total_count: 0,
    low_passed: 0,
    low_count: 0,
    middle_passed: 0,
    middle_count: 0,
    high_passed: 0,
    high_count: 0,
  };
  for (const r of results) {
    const level = r.test.severity.toLowerCase();
    counts.total_count += 1;
    counts[`${level}_count`] += 1;
    if (r.passed) {
      counts.total_passed += 1;
      counts[`${level}_passed`] += 1;
    }
  }
  return {
    ...counts,
    device_count: new Set(results.map((r) => r.device.id)).size,
    test_count: new Set(results.map((r) => r.test.id)).size,
  };
}

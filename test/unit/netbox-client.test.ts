import { createNetboxClient, NetboxError, type NetboxClient } from '../../src/netbox';
import { loadConfig } from '../../src/config';
import { enrichReport } from '../../src/enrichment';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { buildResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const LEGACY = '0123456789abcdef0123456789abcdef01234567';
const V2 = 'nbt_abcDEF123456.0123456789abcdefghijklmnopqrstuvwxyz0123';
const tests = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];

function reportDelivery(id: number, created: string, passed: number, count: number, basePath = ''): ReportDelivery {
  const data = buildReportData({ id, created, total_passed: passed, total_count: count, middle_passed: passed, middle_count: count });
  const d = {
    ...data,
    url: `${basePath}/api/plugins/validity/reports/${id}/`,
    results_url: `${basePath}/api/plugins/validity/test-results/?report_id=${id}`,
  };
  const parsed = parseDelivery(buildBody({ version: '4.6', data: d }));
  if (parsed.kind !== 'report') throw new Error('not a report');
  return parsed;
}

describe('NetBox client and enrichment against a NetBox double', () => {
  let netbox: NetboxDouble;
  let client: NetboxClient;
  afterEach(async () => {
    client?.close();
    await netbox?.close();
  });

  it('follows absolute next links on another host name, with a v2 Bearer token under a base path', async () => {
    netbox = await startNetboxDouble({
      authorization: `Bearer ${V2}`,
      basePath: '/netbox',
      publicOrigin: 'https://netbox.behind-proxy.example:8443',
    });
    netbox.reports.set(7, {
      id: 7,
      created: '2026-03-06T15:11:18.123456Z',
      results: buildResults(2500, { fails: (i) => i % 2 === 0, tests }),
    });
    client = createNetboxClient({ url: netbox.url, token: V2, timeoutMs: 5000 });
    const enrichment = await enrichReport(reportDelivery(7, '2026-03-06T15:11:18.123456Z', 1250, 2500, '/netbox'), {
      client,
      budgetMs: 10_000,
    });
    expect(enrichment.status).toBe('ok');
    if (enrichment.status !== 'ok') return;
    expect(enrichment.summary.results).toHaveLength(1250);
    // Every request reached the double (not the proxy host NetBox put in `next`), with the token and Accept.
    expect(netbox.requests.map((r) => r.path)).toEqual([
      '/netbox/api/plugins/validity/reports/7/',
      '/netbox/api/plugins/validity/test-results/?report_id=7&passed=false&limit=1000&omit=explanation',
      '/netbox/api/plugins/validity/test-results/?report_id=7&passed=false&limit=1000&omit=explanation&offset=1000',
    ]);
    expect(netbox.requests.every((r) => r.authorization === `Bearer ${V2}` && r.accept === 'application/json')).toBe(true);
    expect(enrichment.summary.tests.map((t) => [t.name, t.failingDevices])).toEqual([['ntp-servers', 1250]]);
  });

  it('takes a v1 key NetBox 4.5+ created (40 letters and digits, no longer hex only) and sends it as "Token"', async () => {
    const key = 'Zq9XkT4mWb7RnP2sVd8LfH3jGc6YtA1eUo5NiK0r';
    expect(
      loadConfig({ NETBOX_URL: 'https://netbox.example.com', NETBOX_TOKEN: key }, { readFile: () => '' }).sources[0].netbox.token,
    ).toBe(key);
    netbox = await startNetboxDouble({ authorization: `Token ${key}` });
    client = createNetboxClient({ url: netbox.url, token: key, timeoutMs: 5000 });
    await expect(client.getJson('/api/status/', { deadline: Date.now() + 5000 })).resolves.toMatchObject({
      plugins: { validity: '3.5.2' },
    });
    expect(netbox.requests.map((r) => r.authorization)).toEqual([`Token ${key}`]);
  });

  it('sends a legacy key as "Token", and drops explanations a NetBox without ?omit still sends', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}`, honoursOmit: false });
    netbox.reports.set(8, {
      id: 8,
      created: '2026-03-06T15:11:18Z',
      results: buildResults(30, { fails: () => true, tests, explanationBytes: 50_000 }),
    });
    client = createNetboxClient({ url: netbox.url, token: LEGACY, timeoutMs: 5000 });
    const pages: Record<string, unknown>[][] = [];
    await client.streamList('/api/plugins/validity/test-results/?report_id=8&passed=false', (page) => pages.push(page), {
      deadline: Date.now() + 10_000,
    });
    expect(netbox.requests[0].authorization).toBe(`Token ${LEGACY}`);
    const results = pages.flat();
    expect(results).toHaveLength(30);
    expect(results[0]).toMatchObject({
      id: 1000,
      passed: false,
      test: { name: 'ntp-servers', severity: 'HIGH' },
      device: { name: 'sw-000' },
    });
    expect(results.some((r) => 'explanation' in r)).toBe(false);
  });

  it("says the token was refused on 403 with NetBox's detail, without retrying", async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    client = createNetboxClient({ url: netbox.url, token: 'ffffffffffffffffffffffffffffffffffffffff', timeoutMs: 5000 });
    const error = await client.getJson('/api/plugins/validity/reports/1/', { deadline: Date.now() + 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetboxError);
    expect(error).toMatchObject({ code: 'AUTH', status: 403, retryable: false });
    expect((error as Error).message).toContain('Invalid token');
    expect(netbox.requests).toHaveLength(1);
  });

  it('tells a deleted report: 404 for the report, 400 for an unknown report_id', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    client = createNetboxClient({ url: netbox.url, token: LEGACY, timeoutMs: 5000 });
    const gone = await enrichReport(reportDelivery(99, '2026-03-06T15:11:18Z', 1, 2), { client, budgetMs: 5000 });
    expect(gone).toMatchObject({ status: 'missing', code: 'NOT_FOUND' });
    const list = await client
      .streamList('/api/plugins/validity/test-results/?report_id=99', () => undefined, { deadline: Date.now() + 5000 })
      .catch((e: unknown) => e);
    expect(list).toMatchObject({ code: 'NOT_FOUND', status: 400 });
    expect((list as Error).message).toContain('report_id');
  });

  it('retries a 502 and then succeeds', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    netbox.reports.set(3, { id: 3, created: '2026-03-06T15:11:18Z', results: buildResults(4, { fails: (i) => i < 3, tests }) });
    client = createNetboxClient({ url: netbox.url, token: LEGACY, timeoutMs: 5000, retryBaseMs: 10 });
    netbox.failNext.push(502);
    const enrichment = await enrichReport(reportDelivery(3, '2026-03-06T15:11:18Z', 1, 4), { client, budgetMs: 5000 });
    expect(enrichment.status).toBe('ok');
    expect(netbox.requests).toHaveLength(3);
  });

  it('gives up on a slow page when the budget runs out, saying so', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    netbox.reports.set(4, { id: 4, created: '2026-03-06T15:11:18Z', results: buildResults(1500, { fails: () => true, tests }) });
    netbox.slowOffsets.set(1000, 60_000);
    client = createNetboxClient({ url: netbox.url, token: LEGACY, timeoutMs: 30_000, retryBaseMs: 10 });
    const enrichment = await enrichReport(reportDelivery(4, '2026-03-06T15:11:18Z', 0, 1500), { client, budgetMs: 800 });
    expect(enrichment).toMatchObject({ status: 'missing', code: 'TIMEOUT' });
    if (enrichment.status === 'missing') expect(enrichment.reason).toContain('did not answer within the 0.8 s');
  });

  it('says NetBox is unreachable when nothing listens', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    const url = netbox.url;
    await netbox.close();
    client = createNetboxClient({ url, token: LEGACY, timeoutMs: 2000, retryBaseMs: 10 });
    const enrichment = await enrichReport(reportDelivery(5, '2026-03-06T15:11:18Z', 0, 1), { client, budgetMs: 3000 });
    expect(enrichment).toMatchObject({ status: 'missing', code: 'UNREACHABLE' });
    if (enrichment.status === 'missing') expect(enrichment.reason).toContain('ECONNREFUSED');
  });

  it('refuses a report with the same id from another NetBox', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${LEGACY}` });
    netbox.reports.set(6, { id: 6, created: '2026-01-01T00:00:00Z', results: buildResults(2, { fails: () => true, tests }) });
    client = createNetboxClient({ url: netbox.url, token: LEGACY, timeoutMs: 2000 });
    const enrichment = await enrichReport(reportDelivery(6, '2026-03-06T15:11:18Z', 0, 2), { client, budgetMs: 3000 });
    expect(enrichment).toMatchObject({ status: 'missing', code: 'OTHER_NETBOX' });
  });
});

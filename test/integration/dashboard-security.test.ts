import http from 'node:http';
import { SESSION_COOKIE } from '../../src/dashboard';
import { hrefsOf } from '../helpers/html';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';

/** POSTs the login form from `localAddress` (another loopback address stands for another client). */
function postLogin(url: string, token: string, localAddress = '127.0.0.1'): Promise<{ status: number; cookie?: string }> {
  const body = `token=${encodeURIComponent(token)}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/ui/login`,
      {
        method: 'POST',
        localAddress,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('dashboard logins are slowed down, never locked (issue 14, item 5)', () => {
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  it('accepts the right token after 25 wrong ones from the same address; wrong ones wait longer and longer', async () => {
    const waits: number[] = [];
    relay = await startTestRelay({ ADMIN_TOKEN }, { sleep: async (ms) => void waits.push(ms) });
    for (let i = 0; i < 25; i += 1) expect((await postLogin(relay.url, `wrong-token-number-${i}`)).status).toBe(401);
    // The first five are answered at once; then 1 s, doubling, at most 30 s.
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, ...Array(15).fill(30000)]);
    // Another client (behind no shared address) is not slowed down by them.
    expect((await postLogin(relay.url, 'wrong-from-elsewhere', '127.0.0.2')).status).toBe(401);
    expect(waits).toHaveLength(20);

    const ok = await postLogin(relay.url, ADMIN_TOKEN);
    expect(ok.status).toBe(303);
    expect(ok.cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    const page = await fetch(`${relay.url}/ui`, { headers: { Cookie: ok.cookie! } });
    expect(page.status).toBe(200);
    // A success starts the address afresh.
    expect((await postLogin(relay.url, 'wrong-after-success')).status).toBe(401);
    expect(waits).toHaveLength(20);
  });
});

describe('wrong admin tokens are slowed down alike at the admin API and the dashboard login, one count per address', () => {
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  const api = (url: string, token: string, path = '/api/deliveries') =>
    fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${token}` } }).then((res) => res.status);

  it('30 wrong bearer tokens wait longer and longer, the right one is answered at once, and the login form shares the count', async () => {
    const waits: number[] = [];
    relay = await startTestRelay({ ADMIN_TOKEN }, { sleep: async (ms) => void waits.push(ms) });
    for (let i = 0; i < 30; i += 1) expect(await api(relay.url, `wrong-bearer-token-${i}`)).toBe(401);
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, ...Array(20).fill(30000)]);
    // The same address guessing at the login form or /api/waivers is not a fresh start.
    expect((await postLogin(relay.url, 'wrong-at-the-form')).status).toBe(401);
    expect(await api(relay.url, 'wrong-at-waivers', '/api/waivers')).toBe(401);
    expect(waits.slice(25)).toEqual([30000, 30000]);
    // The right token is never refused, and starts the address afresh.
    expect(await api(relay.url, ADMIN_TOKEN)).toBe(200);
    expect(waits).toHaveLength(27);
    expect(await api(relay.url, 'wrong-after-success')).toBe(401);
    expect(waits).toHaveLength(27);
  });

  it('failed logins at the form slow down the admin API for that address', async () => {
    const waits: number[] = [];
    relay = await startTestRelay({ ADMIN_TOKEN }, { sleep: async (ms) => void waits.push(ms) });
    for (let i = 0; i < 5; i += 1) expect((await postLogin(relay.url, `wrong-token-number-${i}`)).status).toBe(401);
    expect(waits).toEqual([]);
    expect(await api(relay.url, 'wrong-bearer-token')).toBe(401);
    expect(waits).toEqual([1000]);
  });
});

describe('the dashboard says what the configuration exposes, and links only to NetBox (issue 14)', () => {
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  it('warns on every page when WEBHOOK_ALLOW_UNSIGNED=true opens an unsigned webhook to the network', async () => {
    relay = await startTestRelay({ ADMIN_TOKEN, HOST: '0.0.0.0', WEBHOOK_ALLOW_UNSIGNED: 'true' });
    const { cookie } = await postLogin(relay.url, ADMIN_TOKEN);
    expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 4 }) }))).status).toBe(202);
    for (const page of ['/ui', '/ui/deliveries/1']) {
      const html = await (await fetch(`${relay.url}${page}`, { headers: { Cookie: cookie! } })).text();
      // Handlebars writes `=` in text as an entity; the browser shows it as `=`.
      expect(html).toContain('WEBHOOK_ALLOW_UNSIGNED&#x3D;true: deliveries are accepted WITHOUT a signature');
    }
  });

  it('shows no such warning with a secret, and links a forged report only on NETBOX_URL', async () => {
    const secret = 'dashboard-webhook-secret';
    relay = await startTestRelay({ ADMIN_TOKEN, WEBHOOK_SECRET: secret, NETBOX_URL: 'https://netbox.example.com' });
    const { cookie } = await postLogin(relay.url, ADMIN_TOKEN);
    const body = buildBody({
      version: '4.6',
      data: { ...buildReportData({ id: 5 }), url: '@127.0.0.2:18102/api/plugins/validity/reports/5/', results_url: 'javascript:alert(1)' },
    });
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, secret) })).status).toBe(202);
    await waitUntil(() => relay!.workerOutcomes.length > 0 || undefined, 10_000, 'the mail');
    const html = await (await fetch(`${relay.url}/ui/deliveries/1`, { headers: { Cookie: cookie! } })).text();
    expect(html).not.toContain('WEBHOOK_ALLOW_UNSIGNED');
    const outside = hrefsOf(html).filter((h) => !h.startsWith('/ui'));
    expect(outside.length).toBeGreaterThan(0);
    for (const href of outside) expect(new URL(href).origin).toBe('https://netbox.example.com');
  });
});

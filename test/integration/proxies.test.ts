import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { EXIT_CONFIG, runCli } from '../../src/cli';
import { captureIo } from '../helpers/cli-io';
import { PROXY_EGRESS_ADDRESS, startHttpProxy, type HttpProxy } from '../helpers/http-proxy';
import { startNetboxDouble as startSetupDouble } from '../helpers/netbox-double';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { buildContosoAppEnv, CONTOSO_APP, startOAuth2Double, type OAuth2Double } from '../helpers/oauth2-double';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates } from '../helpers/test-certificates';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'proxy-webhook-secret';
const PROXY_PASSWORD = 'pr0xy-pa55word';

/** The environment's proxies (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) carry every outbound HTTP request, as curl reads them. */
describe('HTTP_PROXY, HTTPS_PROXY and NO_PROXY', () => {
  let dir: string;
  let proxy: HttpProxy;
  beforeEach(async () => {
    dir = makeTempDir('proxies-');
    proxy = await startHttpProxy();
  });
  afterEach(async () => {
    await proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function cli(args: string[], env: Record<string, string>) {
    const io = captureIo({ DATA_DIR: path.join(dir, 'data'), ...env }, dir);
    const code = await runCli(['node', 'compliance-relay', ...args], io);
    return { code, out: io.out(), err: io.err() };
  }

  describe('a NetBox that only the proxy may reach', () => {
    let smtp: SmtpPeer;
    let netbox: NetboxDouble;
    let relay: TestRelay | undefined;
    beforeEach(async () => {
      smtp = await startSmtpPeer();
      netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, onlyFrom: PROXY_EGRESS_ADDRESS });
    });
    afterEach(async () => {
      await relay?.stop();
      relay = undefined;
      await netbox.close();
      await smtp.close();
    });

    async function mailReport(env: Record<string, string>, id: number): Promise<string> {
      relay = await startTestRelay({
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: SECRET,
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
        ...env,
      });
      const results = buildResults(6, { fails: (i) => i % 2 === 0 });
      netbox.reports.set(id, { id, created: '2026-03-06T15:11:18Z', results });
      const body = buildBody({ version: '4.6', data: buildReportData({ id, created: '2026-03-06T15:11:18Z', ...countResults(results) }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
      const [mail] = await smtp.waitFor(1);
      return String(mail.parsed.text);
    }

    it('the mail lists the failing results read through HTTP_PROXY (lower-case form), and the proxy carried every request', async () => {
      const text = await mailReport({ http_proxy: proxy.url }, 91);
      expect(text).toContain('WHAT FAILED: 3 failing results');
      expect(netbox.requests.length).toBeGreaterThan(0);
      // Each request NetBox answered came through the proxy, as an absolute URL on NETBOX_URL.
      expect(proxy.requests.length).toBe(netbox.requests.length);
      expect(proxy.requests.every((r) => r.startsWith(`GET ${netbox.url}/api/`))).toBe(true);
    });

    it('NO_PROXY naming NetBox sends it directly: this NetBox refuses that, and the mail says the results could not be read', async () => {
      const text = await mailReport({ HTTP_PROXY: proxy.url, NO_PROXY: 'example.com, 127.0.0.1' }, 92);
      expect(text).toContain('Failing tests are not listed');
      expect(proxy.requests).toEqual([]);
    });
  });

  describe('check-config --online', () => {
    let netbox: NetboxDouble;
    beforeEach(async () => {
      netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    });
    afterEach(async () => netbox.close());

    const env = (extra: Record<string, string>) => ({ NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN, ...extra });
    const port = () => new URL(netbox.url).port;

    it.each([
      ['the host', '127.0.0.1'],
      ['the host and its port', '127.0.0.1:PORT'],
      ['*', '*'],
    ])('NO_PROXY with %s bypasses the proxy', async (_what, noProxy) => {
      // The double's port is known once it listens, when the case runs.
      const value = noProxy.replace('PORT', port());
      const result = await cli(['check-config', '--online'], env({ HTTP_PROXY: proxy.url, NO_PROXY: value }));
      expect(result.code).toBe(0);
      expect(result.out).toContain(`NetBox source default (${netbox.url}): NetBox 4.6.2`);
      expect(proxy.requests).toEqual([]);
      expect(netbox.requests.length).toBeGreaterThan(0);
    });

    it('NO_PROXY naming another port of the host leaves the proxy in force, and the line says which proxy', async () => {
      const result = await cli(['check-config', '--online'], env({ HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1:1' }));
      expect(result.code).toBe(0);
      expect(result.out).toContain(`NetBox source default (${netbox.url} through the proxy ${proxy.url}): NetBox 4.6.2`);
      expect(proxy.requests.length).toBe(netbox.requests.length);
    });

    it('an HTTP_PROXY that refuses its connections is an outage (69), not a configuration error', async () => {
      await proxy.close();
      const result = await cli(['check-config', '--online'], env({ HTTP_PROXY: proxy.url }));
      expect(result.code).toBe(69);
      expect(result.out).toMatch(/NetBox source default \(.* through the proxy .*\): UNREACHABLE/);
      // The address refused is the proxy's: the line says so.
      expect(result.out).toContain(`ECONNREFUSED ${proxy.url.slice('http://'.length)}, through the proxy ${proxy.url})`);
      proxy = await startHttpProxy();
    });

    it('a token that may not list the reports (catch-up) is refused by name: validity.view_compliancereport, exit 78', async () => {
      netbox.forbidden.add('/api/plugins/validity/reports/');
      const result = await cli(['check-config', '--online'], env({}));
      expect(result.code).toBe(EXIT_CONFIG);
      expect(result.out).toContain(
        'the token reads test results (the failing tests in mails); NetBox refused what this configuration needs:',
      );
      expect(result.out).toContain(
        '  grant validity.view_compliancereport: the token may not read the reports list (the catch-up); NetBox refused the token (HTTP 403): You do not have permission to perform this action.',
      );
      // With the catch-up off, the reports list is not needed and not asked.
      const off = await cli(['check-config', '--online'], env({ CATCH_UP_EVERY: 'off' }));
      expect(off.code).toBe(0);
      expect(netbox.requests.filter((r) => r.path.startsWith('/api/plugins/validity/reports/'))).toHaveLength(1);
    });

    it('with routes by owner, devices, contacts and contact assignments are checked, each refusal naming its permission', async () => {
      fs.writeFileSync(
        path.join(dir, 'routes.yaml'),
        'routes:\n  - name: owners\n    to:\n      netbox_contacts: { role: owner, on: [site] }\n      fallback: noc@example.com\n      allowed_domains: [example.com]\n',
      );
      const routed = env({ ROUTES_FILE: 'routes.yaml', CATCH_UP_EVERY: 'off' });
      const passing = await cli(['check-config', '--online'], routed);
      expect(passing.err).toBe('');
      expect(passing.code).toBe(0);
      expect(passing.out).toContain(
        'the token reads test results (the failing tests in mails), devices (routes by owner), contact assignments (routes by owner), contacts (routes by owner)',
      );

      netbox.forbidden.add('/api/tenancy/contact-assignments/');
      netbox.forbidden.add('/api/dcim/devices/');
      const refused = await cli(['check-config', '--online'], routed);
      expect(refused.code).toBe(EXIT_CONFIG);
      // One line per refusal, each naming its permission; what the token may read is said too.
      expect(refused.out).toContain('the token reads test results (the failing tests in mails), contacts (routes by owner);');
      expect(refused.out).toContain(
        '  grant dcim.view_device: the token may not read devices (routes by owner); NetBox refused the token (HTTP 403)',
      );
      expect(refused.out).toContain(
        '  grant tenancy.view_contactassignment: the token may not read contact assignments (routes by owner); NetBox refused the token (HTTP 403)',
      );
      expect(refused.out).not.toContain('grant tenancy.view_contact:');
    });
  });

  describe('an https NetBox with a private CA behind an HTTPS_PROXY that wants credentials', () => {
    let server: https.Server;
    let url: string;
    let caFile: string;
    let authProxy: HttpProxy;
    const seen: string[] = [];
    beforeEach(async () => {
      const certs = createTestCertificates(dir);
      caFile = certs.caFile;
      server = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
        seen.push(req.url ?? '');
        res.setHeader('Content-Type', 'application/json');
        res.end('{"netbox-version": "4.6.8", "plugins": {"validity": "3.5.2"}, "results": []}');
      });
      // Only the proxy gets through.
      server.on('connection', (socket) => {
        if ((socket as Socket).remoteAddress !== PROXY_EGRESS_ADDRESS) socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      authProxy = await startHttpProxy({ credentials: { user: 'relay', password: PROXY_PASSWORD } });
    });
    afterEach(async () => {
      await authProxy.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      seen.length = 0;
    });

    const withProxy = (password: string) => ({
      NETBOX_URL: url,
      NETBOX_TOKEN: TOKEN,
      NETBOX_CA_FILE: caFile,
      HTTPS_PROXY: authProxy.url.replace('http://', `http://relay:${password}@`),
      HTTP_PROXY: 'http://proxy.invalid:3128',
    });

    it("tunnels through it (CONNECT), verifies NetBox's certificate against NETBOX_CA_FILE, and never prints the proxy's password", async () => {
      const result = await cli(['check-config', '--online'], withProxy(PROXY_PASSWORD));
      expect(result.code).toBe(0);
      expect(result.out).toContain(`NetBox source default (${url} through the proxy ${authProxy.url}): NetBox 4.6.8, validity 3.5.2`);
      expect(authProxy.requests.length).toBeGreaterThan(0);
      expect(authProxy.requests.every((r) => r === `CONNECT ${url.slice('https://'.length)}`)).toBe(true);
      expect(seen).toContain('/api/status/');
      expect(result.out).toContain(
        `Proxies for NetBox, OAuth2 and Graph: https requests go through ${authProxy.url} (with credentials, not shown), http requests through http://proxy.invalid:3128`,
      );
      const json = await cli(['check-config', '--json'], withProxy(PROXY_PASSWORD));
      expect(json.out).toContain(`"httpsProxy": "${authProxy.url.replace('http://', 'http://relay:REDACTED@')}/"`);
      for (const output of [result.out, result.err, json.out]) expect(output).not.toContain(PROXY_PASSWORD);
    });

    it('a wrong proxy password: the proxy refuses (407), which names the proxy settings to fix, exit 78', async () => {
      const result = await cli(['check-config', '--online'], withProxy('wrong'));
      expect(result.code).toBe(EXIT_CONFIG);
      expect(result.out).toContain(
        'the proxy refused to carry the request to NetBox (HTTP 407): check the credentials in HTTPS_PROXY or HTTP_PROXY',
      );
      expect(authProxy.refused).toBeGreaterThan(0);
      expect(seen).toEqual([]);
    });
  });

  it('check-config names a proxy variable that is not a URL, and says when no proxy is in force', async () => {
    const bad = await cli(['check-config'], { HTTPS_PROXY: 'http://[broken' });
    expect(bad.code).toBe(EXIT_CONFIG);
    expect(bad.err).toContain('HTTPS_PROXY: is not a proxy URL');
    const none = await cli(['check-config'], {});
    expect(none.out).toContain('Proxies: none (HTTPS_PROXY and HTTP_PROXY are not set)');
  });

  it('netbox-setup goes through the proxy too', async () => {
    const netbox = await startSetupDouble({ version: '4.6', tokens: [{ token: TOKEN, write: true }] });
    try {
      const result = await cli(['netbox-setup', '--payload-url', 'https://relay.example.com/webhook', '--dry-run'], {
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
        WEBHOOK_SECRET: SECRET,
        HTTP_PROXY: proxy.url,
      });
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(netbox.requests.length).toBeGreaterThan(0);
      expect(proxy.requests).toHaveLength(netbox.requests.length);
      expect(proxy.requests.every((r) => r.startsWith(`GET ${netbox.url}/api/`))).toBe(true);
    } finally {
      await netbox.close();
    }
  });

  describe('the OAuth2 token endpoint and Microsoft Graph', () => {
    let double: OAuth2Double;
    let relay: TestRelay | undefined;
    beforeEach(async () => {
      double = await startOAuth2Double({ now: () => Date.now(), microsoft: CONTOSO_APP });
    });
    afterEach(async () => {
      await relay?.stop();
      relay = undefined;
      await double.close();
    });

    async function sendOne(env: Record<string, string>): Promise<void> {
      relay = await startTestRelay(
        {
          MAIL_TRANSPORT: 'graph',
          GRAPH_URL: double.graphUrl,
          MAIL_TO: 'netops@contoso.example',
          MAIL_FROM: 'Compliance Relay <reports@contoso.example>',
          WEBHOOK_SECRET: SECRET,
          ...buildContosoAppEnv(double),
          ...env,
        },
        { tune: quickRetries(50, 200) },
      );
      const body = buildBody({ data: buildReportData({ id: 700 }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
      await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'sent');
    }

    it('the token and the mail go through HTTP_PROXY', async () => {
      await sendOne({ HTTP_PROXY: proxy.url });
      expect(double.tokenRequests).toHaveLength(1);
      expect(double.graphSends).toHaveLength(1);
      const target = `CONNECT ${new URL(double.graphUrl).host}`;
      // One tunnel carries the token request and the mail (kept alive), or one each.
      expect(proxy.requests.length).toBeGreaterThan(0);
      expect(proxy.requests.every((r) => r === target)).toBe(true);
    });

    it('NO_PROXY naming their host sends them directly', async () => {
      await sendOne({ HTTP_PROXY: proxy.url, NO_PROXY: '.example.com,127.0.0.1' });
      expect(double.graphSends).toHaveLength(1);
      expect(proxy.requests).toEqual([]);
    });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { sampleValue } from '../helpers/prometheus';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { deviceName, OWNER_ROUTES, ownerOf, siteSlug, stockOwnerNetwork } from '../helpers/owner-network';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const CREATED = '2026-03-06T15:11:18.123456Z';
const GOLDEN = path.join(__dirname, '..', 'fixtures', 'golden', 'owner-mail.txt');

const text = (m: ReceivedMail) => String(m.parsed.text);
const header = (m: ReceivedMail, name: string) => String(m.parsed.headers.get(name));

/** The site a mail is for, from its one recipient (`owner-0007@example.com` → 7). */
const siteOf = (m: ReceivedMail) => Number(/^owner-(\d+)@/.exec(m.envelope.to.join())?.[1]);

/**
 * A mail as every owner gets it, with what differs from owner to owner and run to run put as placeholders: its
 * site and devices, the report's id and whole-report figures, NetBox's port, the relay's links and ids.
 */
function normalize(m: ReceivedMail, site: number, reportId: number, netboxUrl: string): string {
  const pad = String(site).padStart(4, '0');
  const body = [
    `Subject: ${m.parsed.subject}`,
    ...['x-compliance-pass-percent', 'x-compliance-high-failed', 'x-compliance-verdict'].map((h) => `${h}: ${header(m, h)}`),
    '',
    text(m),
  ].join('\n');
  return body
    .replace(/result_id=\d+|test-results\/\d+\//g, '<result>')
    .split(netboxUrl)
    .join('<netbox>')
    .split(new URL(netboxUrl).host)
    .join('<netbox-host>')
    .replace(new RegExp(`\\b${reportId}\\b`, 'g'), '<report>')
    .replace(new RegExp(`(sw|site|owner)-${pad}\\b`, 'g'), '$1-<site>')
    .replace(/The whole report: .*\n/, 'The whole report: <whole report>\n');
}

describe('routes by owner at scale: one report, a thousand owners', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  let dir: string;

  beforeEach(async () => {
    dir = makeTempDir('relay-owners-scale-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), OWNER_ROUTES);
    smtp = await startSmtpPeer();
    // NetBox answers each request after a small delay: the requests are counted, their time belongs to the bench.
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, latencyMs: 2 });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function mailOwners(sites: number, reportId: number): Promise<ReceivedMail[]> {
    const results = stockOwnerNetwork(netbox, sites);
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, 'routes.yaml'), NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN },
      { dataDir: path.join(dir, 'data') },
    );
    netbox.reports.set(reportId, { id: reportId, created: CREATED, results });
    const body = buildBody({ version: '4.6', data: buildReportData({ id: reportId, created: CREATED, ...countResults(results) }) });
    expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
    const r = relay;
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 150_000, 'the outcome');
    expect(r.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
    return smtp.received;
  }

  it("1,000 owners: each mailed once, only its own site's devices, its own counts in subject and headers, in requests that grow with NetBox's pages", async () => {
    // (A thousand mails through an SMTP peer that parses each one, on a shared machine: the time is the bench's to measure.)
    const mails = await mailOwners(1000, 901);
    expect(mails).toHaveLength(1000);
    expect(new Set(mails.map((m) => m.envelope.to.join())).size).toBe(1000);
    for (const m of mails) {
      const site = siteOf(m);
      expect(m.envelope.to).toEqual([ownerOf(site)]);
      // 25 results on its 5 devices, one HIGH failing: 24/25, HIGH 9/10; never the report's 1000 HIGH failing.
      expect(m.parsed.subject).toMatch(/^First: 96\.0%, 1 HIGH failing \u2014 report 901 \u00b7 /);
      expect(header(m, 'x-compliance-high-failed')).toBe('1');
      expect(header(m, 'x-compliance-pass-percent')).toBe('96.0');
      expect(text(m)).toContain(`These figures are for every device you own in NetBox (5); with failures: ${deviceName(site, 0)}.`);
      expect(text(m)).toMatch(/HIGH\s+9\/10\s+90\.0%/);
      // No other site's device anywhere in the mail.
      const named = new Set(text(m).match(/sw-\d{4}-\d/g));
      expect([...named].every((name) => name.startsWith(`sw-${String(site).padStart(4, '0')}-`))).toBe(true);
    }
    // The report, its failing results (one page), its results per device (25 pages), and ownership in pages of
    // 100 ids: devices, contact assignments, contacts, each site's devices; never a request per owner.
    const paths = netbox.requests.map((q) => q.path);
    expect(paths.length).toBeLessThanOrEqual(100);
    expect(paths.filter((p) => p.startsWith('/api/tenancy/contacts/'))).toHaveLength(10);
    expect(paths.filter((p) => p.includes('severity='))).toEqual([]);
    // Every mail reads as the small run's golden mail, with its own site in place.
    const golden = fs.readFileSync(GOLDEN, 'utf8');
    for (const m of mails) expect(normalize(m, siteOf(m), 901, netbox.url)).toBe(golden);
  }, 180_000);

  it("groups NetBox cannot count say so in their subject and headers, never the report's figures; the log and the metric say how many and why", async () => {
    // The report's results (the read without a `passed` filter) are refused; the failing results and the owners are not.
    netbox.failWhen = (p) => (p.startsWith('/api/plugins/validity/test-results/') && !p.includes('passed=') ? 403 : undefined);
    const mails = await mailOwners(3, 903);
    expect(mails).toHaveLength(3);
    for (const m of mails) {
      expect(m.envelope.to).toEqual([ownerOf(siteOf(m))]);
      // The report has 3 HIGH failing and 97.3% passed: neither is the owner's, so neither is in its subject or headers.
      expect(m.parsed.subject).toMatch(/^First: counts unavailable, 1 HIGH failing \u2014 report 903 \u00b7 /);
      expect(header(m, 'x-compliance-high-failed')).toBe('1');
      expect(header(m, 'x-compliance-pass-percent')).toBe('unknown');
      expect(text(m)).toContain(
        "Your devices' counts are unavailable (NetBox refused the relay's token when asked for the report's results (HTTP 403); check that it may read validity's test results): these figures are the whole report's, not yours",
      );
      expect(text(m)).toContain(deviceName(siteOf(m), 0));
    }
    const warning = relay!.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.groups !== undefined);
    expect(warning).toMatchObject({
      level: 40,
      route: 'owners',
      groups: 3,
      code: 'AUTH',
      msg: expect.stringContaining('3 owner group(s) without counts of their own'),
    });
    const metric = { reason: 'AUTH', source: 'default' };
    expect(sampleValue(await relay!.relay.metrics.render(), 'compliance_relay_owner_groups_uncounted_total', metric)).toBe(3);
  });

  it("a small run's owners' mails are the golden mail (test/fixtures/golden/owner-mail.txt; UPDATE_GOLDEN=1 rewrites it)", async () => {
    const small = await mailOwners(3, 902);
    const golden = normalize(
      small.find((m) => siteOf(m) === 2)!,
      2,
      902,
      netbox.url,
    );
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(GOLDEN, golden);
    expect(golden).toBe(fs.readFileSync(GOLDEN, 'utf8'));
    for (const m of small) expect(normalize(m, siteOf(m), 902, netbox.url)).toBe(golden);
    expect(golden).toContain(`you are the primary owner contact of site ${siteSlug(2).replace('0002', '<site>')}`);
  });
});

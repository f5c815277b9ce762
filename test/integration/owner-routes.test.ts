import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import { SqliteStore } from '../../src/store';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { textOf } from '../helpers/html';
import { sampleValue } from '../helpers/prometheus';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import type { Config } from '../../src/config';
import { makeTempDir, postWebhook, quickNetbox, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const ADMIN_TOKEN = 'owner-routes-admin-token-0123456789';
const NTP = { id: 1, name: 'ntp-servers', severity: 'HIGH' as const };
const SNMP = { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const };
const OWNER = { id: 1, name: 'Owner', slug: 'owner' };
const OPERATIONS = { id: 2, name: 'Operations', slug: 'operations' };
const SITES = {
  fra1: { id: 1, name: 'Frankfurt 1', slug: 'fra1' },
  ams1: { id: 2, name: 'Amsterdam 1', slug: 'ams1' },
  lon1: { id: 3, name: 'London 1', slug: 'lon1' },
};
const ACME = { id: 7, name: 'Acme', slug: 'acme' };
const ACCESS = { id: 5, name: 'Access switch', slug: 'access-switch' };
const CORE = { id: 6, name: 'Core switch', slug: 'core-switch' };

const ROUTES = `
routes:
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [device, site, tenant], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
    attach_csv: true
    continue: true
  - name: core-page
    match:
      device: { role: core-switch }
    to: oncall@example.com
`;

type Fails = ('ntp' | 'snmp')[];

/** Two results per device (HIGH ntp, MIDDLE snmp): each device's list names the tests failing on it. */
function results(
  fails: Record<'sw-fra-1' | 'sw-fra-2' | 'sw-ams-1' | 'sw-lon-1', Fails> = {
    'sw-fra-1': ['ntp'],
    'sw-fra-2': ['snmp'],
    'sw-ams-1': ['ntp', 'snmp'],
    'sw-lon-1': ['ntp'],
  },
): ResultSpec[] {
  const plan: [number, string, Fails][] = [
    [101, 'sw-fra-1', fails['sw-fra-1']],
    [102, 'sw-fra-2', fails['sw-fra-2']],
    [103, 'sw-ams-1', fails['sw-ams-1']],
    [104, 'sw-lon-1', fails['sw-lon-1']],
    [105, 'sw-fra-ok', []],
  ];
  return plan.flatMap(([id, name, fails], i) => [
    { id: 5000 + 2 * i, test: NTP, device: { id, name }, passed: !fails.includes('ntp') },
    { id: 5001 + 2 * i, test: SNMP, device: { id, name }, passed: !fails.includes('snmp') },
  ]);
}

/** NetBox's inventory: devices at three sites, owners of two, a tenant, and contacts that must not be mailed. */
function stock(netbox: NetboxDouble, options: { tenantOwner?: boolean } = {}): void {
  const device = (id: number, name: string, site: (typeof SITES)['fra1'], role = ACCESS, tenant: typeof ACME | null = null) =>
    netbox.devices.set(id, { id, name, site, role, tenant, platform: { id: 1, name: 'EOS', slug: 'eos' }, tags: [] });
  device(101, 'sw-fra-1', SITES.fra1, CORE, ACME);
  device(102, 'sw-fra-2', SITES.fra1);
  device(103, 'sw-ams-1', SITES.ams1);
  device(104, 'sw-lon-1', SITES.lon1);
  device(105, 'sw-fra-ok', SITES.fra1);
  const contacts: [number, string, string][] = [
    [11, 'Alice', 'alice@example.com'],
    [12, 'Eve', 'eve@example.com'],
    [13, 'Bob', 'bob@example.com'],
    [14, 'Dave', 'dave@example.com'],
    [15, 'Carol', 'carol@example.com'],
    [16, 'Olga', 'olga@example.com'],
  ];
  for (const [id, name, email] of contacts) netbox.contacts.set(id, { id, name, email });
  const assign = (id: number, objectType: string, objectId: number, contactId: number, priority: 'primary' | 'secondary', role = OWNER) =>
    netbox.assignments.push({ id, objectType, objectId, contactId, role, priority });
  assign(1, 'dcim.site', 1, 11, 'primary');
  assign(2, 'dcim.site', 1, 12, 'primary');
  assign(3, 'dcim.site', 2, 13, 'primary');
  assign(4, 'dcim.site', 1, 14, 'secondary'); // not primary: never mailed
  assign(5, 'dcim.site', 3, 16, 'primary', OPERATIONS); // not the owner role: lon1 has no owner
  if (options.tenantOwner) assign(6, 'tenancy.tenant', 7, 15, 'primary');
}

const text = (m: ReceivedMail) => String(m.parsed.text);
const to = (m: ReceivedMail) => [...m.envelope.to].sort().join(',');

describe.each(['4.6.2', '3.7.8'])('routes by owner: each team gets its own failures (NetBox %s)', (version) => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  let dir: string;

  beforeEach(async () => {
    dir = makeTempDir('relay-owners-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    smtp = await startSmtpPeer();
    // A page of 2: contacts and assignments come in several pages.
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, version, maxPageSize: 2 });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}, tune?: (config: Config) => Config): Promise<TestRelay> {
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Compliance <relay@example.com>',
        ROUTES_FILE: path.join(dir, 'routes.yaml'),
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
        ...env,
      },
      { dataDir: path.join(dir, 'data'), tune },
    );
    return relay;
  }

  async function deliver(r: TestRelay, id: number, specs = results(), created = '2026-03-06T15:11:18.123456Z'): Promise<number> {
    netbox.reports.set(id, { id, created, results: specs });
    const body = buildBody({
      version: '4.6',
      data: buildReportData({ id, created, ...countResults(specs) }),
    });
    const res = await postWebhook(r.webhookUrl, body);
    expect(res.status).toBe(202);
    return res.json.id as number;
  }

  it('two sites with their own primary owners get one mail each with only their failures and ratios; the unowned device goes to the fallback', async () => {
    stock(netbox);
    const r = await start();
    const deliveryId = await deliver(r, 301);
    await smtp.waitFor(4);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    expect(r.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
    const mails = smtp.received;
    expect(mails.map(to).sort()).toEqual(['alice@example.com,eve@example.com', 'bob@example.com', 'noc@example.com', 'oncall@example.com']);
    // The dashboard keeps each owner group's own mail (what each team received), by its Message-ID.
    await waitUntil(async () => ((await r.relay.store.listSentMessages(deliveryId)).length === 4 ? true : undefined), 5_000, 'four copies');
    const kept = await r.relay.store.listSentMessages(deliveryId);
    expect(kept.map((m) => m.messageId).sort()).toEqual(mails.map((m) => String(m.parsed.messageId)).sort());
    expect(
      kept
        .filter((m) => m.route.startsWith('owners~'))
        .map((m) => m.envelopeTo.join(','))
        .sort(),
    ).toEqual(['alice@example.com,eve@example.com', 'bob@example.com', 'noc@example.com']);

    const fra = mails.find((m) => to(m) === 'alice@example.com,eve@example.com')!;
    // Over every device of fra1, the passing sw-fra-ok too; the failures listed are only the failing ones.
    expect(fra.parsed.subject).toMatch(/^First: 66\.7%, .* \u2014 report 301 \u00b7 /);
    expect(text(fra)).toContain('Why you: you are the primary owner contact of site fra1.');
    expect(text(fra)).toContain('These figures are for every device you own in NetBox (3); with failures: sw-fra-1, sw-fra-2.');
    expect(text(fra)).toContain('The whole report: 5/10 passed (50.0%), HIGH 2/5 (40.0%), MIDDLE 3/5 (60.0%).');
    expect(text(fra)).toMatch(/HIGH\s+2\/3\s+66\.7%/);
    expect(text(fra)).toMatch(/MIDDLE\s+2\/3\s+66\.7%/);
    expect(text(fra)).toContain('sw-fra-1');
    expect(text(fra)).not.toContain('sw-ams-1');
    expect(text(fra)).not.toContain('sw-lon-1');
    // The route attaches the CSV (attach_csv): each group's mail, of its own devices' failures.
    expect(fra.parsed.attachments.map((a) => a.filename)).toEqual(['report-301-failures-owners.csv']);
    const fraCsv = fra.parsed.attachments[0].content.toString('utf8');
    expect(fraCsv).toContain('sw-fra-1,');
    expect(fraCsv).not.toContain('sw-ams-1');

    const ams = mails.find((m) => to(m) === 'bob@example.com')!;
    expect(ams.parsed.subject).toMatch(/^First: 0\.0%, .* \u2014 report 301 \u00b7 /);
    expect(text(ams)).toContain('you are the primary owner contact of site ams1');
    expect(text(ams)).not.toContain('sw-fra-');

    const noc = mails.find((m) => to(m) === 'noc@example.com')!;
    expect(noc.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 301 \u00b7 /);
    expect(text(noc)).toContain("you are this route's fallback");
    expect(text(noc)).toContain('These figures are for your 1 device only: sw-lon-1.');
    expect(text(noc)).toContain('sw-lon-1');
    expect(text(noc)).not.toContain('sw-fra-');

    // Only the core switch's failures page the on-call: its own figures, not the report's.
    const page = mails.find((m) => to(m) === 'oncall@example.com')!;
    expect(page.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 301 \u00b7 /);
    expect(text(page)).toContain("the route's device condition selects this device");
    expect(text(page)).not.toContain('sw-ams-1');
    // A route without attach_csv attaches nothing.
    expect(page.parsed.attachments).toEqual([]);

    // One thread per owner group: different Message-IDs and thread roots, stable group keys in a header.
    const groupMails = [fra, ams, noc];
    expect(new Set(groupMails.map((m) => m.parsed.messageId)).size).toBe(3);
    expect(new Set(groupMails.map((m) => String(m.parsed.headers.get('references'))).values()).size).toBe(3);
    expect(noc.parsed.headers.get('x-compliance-owner-group')).toBe('unowned');
    expect(groupMails.every((m) => m.parsed.headers.get('x-compliance-route') === 'owners')).toBe(true);

    // Each object type was asked with the filter name of this NetBox version, and answers were paged.
    const typeFilter = version.startsWith('4') ? 'object_type=dcim.site' : 'content_type=dcim.site';
    expect(netbox.requests.some((q) => q.path.startsWith('/api/tenancy/contact-assignments/') && q.path.includes(typeFilter))).toBe(true);
    expect(netbox.requests.filter((q) => q.path.startsWith('/api/tenancy/contacts/')).length).toBeGreaterThanOrEqual(2);
    expect(netbox.requests.some((q) => q.path.startsWith('/api/tenancy/contact-assignments/') && q.path.includes('offset=2'))).toBe(true);
  });

  it("each owner's mail carries its own group's verdict and newly failing, whatever the whole report did", async () => {
    stock(netbox);
    const r = await start();
    // Report 311: fra1's devices pass; ams1 fails HIGH ntp and MIDDLE snmp; lon1 (unowned) fails ntp.
    await deliver(
      r,
      311,
      results({ 'sw-fra-1': [], 'sw-fra-2': [], 'sw-ams-1': ['ntp', 'snmp'], 'sw-lon-1': ['ntp'] }),
      '2026-03-06T15:11:18.123456Z',
    );
    await smtp.waitFor(2);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the first outcome');
    const before = smtp.received.length;
    // Report 312: the whole report gains (HIGH 3/5 → 5/5, 70% → 80%), but fra1's sw-fra-1 newly fails snmp;
    // ams1 fixed its HIGH ntp.
    await deliver(
      r,
      312,
      results({ 'sw-fra-1': ['snmp'], 'sw-fra-2': [], 'sw-ams-1': ['snmp'], 'sw-lon-1': [] }),
      '2026-03-07T15:11:18.123456Z',
    );
    // alice+eve (fra1), bob (ams1), the core page (sw-fra-1 is a core switch), and the fallback: lon1's
    // sw-lon-1 (nobody's) fails nothing now, and its fix is the fallback group's.
    await smtp.waitFor(before + 4);
    await waitUntil(() => (r.workerOutcomes.length > 1 ? true : undefined), 10_000, 'the second outcome');
    const mails = smtp.received.slice(before);
    expect(mails.map(to).sort()).toEqual(['alice@example.com,eve@example.com', 'bob@example.com', 'noc@example.com', 'oncall@example.com']);
    const verdictOf = (m: ReceivedMail) => m.parsed.headers.get('x-compliance-verdict');

    // (The whole report's verdict is "mixed": HIGH better, MIDDLE newly failing; test/unit/devices-trend.test.ts.)
    const fra = mails.find((m) => to(m) === 'alice@example.com,eve@example.com')!;
    expect(fra.parsed.subject).toMatch(/^Worse: /);
    expect(verdictOf(fra)).toBe('worse');
    // The first line under the banner is the group's verdict, on its failing results.
    const fraLines = text(fra).split('\n');
    expect(fraLines[2]).toBe('Worse than report 311 on these devices: 1 failing, was 0.');
    expect(text(fra)).toContain('Newly failing: [MIDDLE] snmp-community (1 device)');
    expect(text(fra)).not.toContain('sw-ams-1');
    expect(text(fra)).not.toContain('Fixed since report 311');

    const ams = mails.find((m) => to(m) === 'bob@example.com')!;
    expect(ams.parsed.subject).toMatch(/^Better: /);
    expect(verdictOf(ams)).toBe('better');
    expect(text(ams)).toContain('Better than report 311 on these devices: 1 failing, was 2; HIGH 0 failing, was 1.');
    expect(text(ams)).not.toMatch(/Newly failing/);
    expect(text(ams)).toContain('Fixed since report 311:\n  - [HIGH] ntp-servers: sw-ams-1');
    expect(text(ams)).not.toContain('sw-fra-1');

    const noc = mails.find((m) => to(m) === 'noc@example.com')!;
    expect(verdictOf(noc)).toBe('better');
    expect(text(noc)).toContain('Fixed since report 311:\n  - [HIGH] ntp-servers: sw-lon-1');
    expect(text(noc)).toContain(
      'These figures are for your 1 device only. Fixed since the previous report, failing nothing now: sw-lon-1.',
    );
    expect(text(noc)).toMatch(/Devices: 1 /);

    // The core page narrowed to sw-fra-1 by its device condition reads that device's own verdict too.
    const page = mails.find((m) => to(m) === 'oncall@example.com')!;
    expect(verdictOf(page)).toBe('worse');
  });

  it("an owner group whose device now passes everything gets its mail, with the fix and a better verdict; an on-failure route's does not", async () => {
    fs.writeFileSync(
      path.join(dir, 'routes.yaml'),
      ROUTES.replace(
        '  - name: core-page',
        '  - name: failing-owners\n    to:\n      netbox_contacts: { role: owner, on: [site], priority: primary }\n      fallback: noc-failing@example.com\n      allowed_domains: [example.com]\n    notify: on-failure\n    continue: true\n  - name: core-page',
      ),
    );
    stock(netbox);
    const r = await start({ ADMIN_TOKEN });
    // Report 321: sw-ams-1 (Bob's, ams1) fails ntp and snmp; fra1's sw-fra-1 fails ntp.
    await deliver(r, 321, results({ 'sw-fra-1': ['ntp'], 'sw-fra-2': [], 'sw-ams-1': ['ntp', 'snmp'], 'sw-lon-1': [] }));
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the first outcome');
    const before = smtp.received.length;
    // Report 322: sw-ams-1 passes everything; sw-fra-1 still fails ntp.
    const deliveryId = await deliver(
      r,
      322,
      results({ 'sw-fra-1': ['ntp'], 'sw-fra-2': [], 'sw-ams-1': [], 'sw-lon-1': [] }),
      '2026-03-07T15:11:18.123456Z',
    );
    // Bob, fra1's owners on both routes, the core page (sw-fra-1 is a core switch).
    await smtp.waitFor(before + 4);
    await waitUntil(() => (r.workerOutcomes.length > 1 ? true : undefined), 10_000, 'the second outcome');
    const mails = smtp.received.slice(before);
    expect(mails).toHaveLength(4);
    const bobs = mails.filter((m) => to(m) === 'bob@example.com');
    // Bob's owners mail, and none from the on-failure route: nothing of his fails now.
    expect(bobs).toHaveLength(1);
    const bob = bobs[0];
    expect(bob.parsed.headers.get('x-compliance-verdict')).toBe('better');
    expect(bob.parsed.subject).toMatch(/^Better: 100\.0%, all passed \u2014 report 322/);
    expect(text(bob)).toContain('Better than report 321 on these devices: 0 failing, was 2; HIGH 0 failing, was 1.');
    expect(text(bob)).toContain('Fixed since report 321:');
    expect(text(bob)).toMatch(/\[HIGH\] ntp-servers: sw-ams-1/);
    expect(text(bob)).toMatch(/\[MIDDLE\] snmp-community: sw-ams-1/);
    expect(text(bob)).toContain('Fixed since the previous report, failing nothing now: sw-ams-1.');
    expect(text(bob)).not.toContain('sw-fra-1');
    // fra1's owners hear from both routes: sw-fra-1 still fails.
    expect(mails.filter((m) => to(m) === 'alice@example.com,eve@example.com')).toHaveLength(2);
    // The plan records Bob's group with its fixed device, and the on-failure route has no group for it.
    const plan = await r.relay.store.listRouteMails([deliveryId]);
    expect(plan.find((m) => m.route.startsWith('owners~') && m.ownerGroup?.to.includes('bob@example.com'))?.ownerGroup).toMatchObject({
      devices: [],
      fixedDevices: ['sw-ams-1'],
    });
    expect(plan.filter((m) => m.route.startsWith('failing-owners~')).map((m) => m.ownerGroup?.to)).toEqual([
      ['alice@example.com', 'eve@example.com'],
    ]);
    // The delivery's page names the fixed device, not "the whole report".
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(Date.now()).cookie}`;
    const page = textOf(await (await fetch(`${r.url}/ui/deliveries/${deliveryId}`, { headers: { Cookie: cookie } })).text());
    expect(page).toContain('fixed, failing nothing now: sw-ams-1');
  });

  it('contacts whose e-mail field is a list, a group, a disguised name, carries a CR LF or is outside allowed_domains are not mailed: the fallback gets their failures, with the reason, and the log says so', async () => {
    stock(netbox);
    // ams1's owner Bob is replaced by contacts that would each add or disguise recipients.
    netbox.assignments.splice(
      netbox.assignments.findIndex((a) => a.id === 3),
      1,
    );
    const hostile: [number, string][] = [
      [21, 'bob@example.com, x@outside.example'],
      [22, 'bob@example.com; x@outside.example'],
      [23, 'team: bob@example.com, x@outside.example;'],
      [24, '"bob@example.com" <x@outside.example>'],
      [25, 'bob@example.com\r\nBcc: y@outside.example'],
      [26, 'mallory@outside.example'],
    ];
    for (const [id, email] of hostile) {
      netbox.contacts.set(id, { id, name: `c${id}`, email });
      netbox.assignments.push({ id: 100 + id, objectType: 'dcim.site', objectId: 2, contactId: id, role: OWNER, priority: 'primary' });
    }
    // fra1 also names an outsider next to Alice and Eve: they still get their mail, the fallback hears of fra1 too.
    netbox.contacts.set(27, { id: 27, name: 'Out', email: 'out@example.com.outside.example' });
    netbox.assignments.push({ id: 127, objectType: 'dcim.site', objectId: 1, contactId: 27, role: OWNER, priority: 'primary' });
    const r = await start();
    await deliver(r, 305);
    await smtp.waitFor(3);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    const envelopes = smtp.received.flatMap((m) => m.envelope.to);
    expect(envelopes.filter((a) => !a.endsWith('@example.com'))).toEqual([]);
    expect(smtp.received.map(to).sort()).toEqual(['alice@example.com,eve@example.com', 'noc@example.com', 'oncall@example.com']);
    const noc = smtp.received.find((m) => to(m) === 'noc@example.com')!;
    expect(JSON.stringify(noc.parsed.to)).not.toContain('outside');
    expect(text(noc)).toContain('sw-ams-1');
    expect(text(noc)).toContain('sw-fra-1');
    expect(text(noc)).toContain('sw-lon-1');
    expect(text(noc)).toContain("you are this route's fallback. Not mailed:");
    expect(text(noc)).toContain('"bob@example.com, x@outside.example" (contact of site ams1): is not one plain e-mail address');
    expect(text(noc)).toContain('"out@example.com.outside.example" (contact of site fra1): example.com.outside.example is outside');
    expect(text(noc)).toContain(' and 2 more.');
    const warning = r.logs.map((l) => JSON.parse(l) as { level: number; msg: string; refused?: string[] }).find((l) => l.refused);
    expect(warning).toMatchObject({
      level: 40,
      msg: expect.stringContaining('route owners: NetBox names contacts the route may not mail'),
    });
    expect(warning!.refused).toHaveLength(7);
    expect(warning!.refused).toContain(
      `"mallory@outside.example" (contact of site ams1): outside.example is outside the route's allowed_domains`,
    );
    expect(warning!.refused).toContain(
      '"bob@example.com\\r\\nBcc: y@outside.example" (contact of site ams1): is not one plain e-mail address (a list, a name or a character outside a plain local part)',
    );
  });

  it('NetBox too slow with the owners (within the enrichment budget): the fallback gets the whole report with a note', async () => {
    stock(netbox);
    // The failing results come at once; the contact assignments only after the budget is spent.
    netbox.slowPaths.set('/api/tenancy/contact-assignments/', 5_000);
    const r = await start({}, quickNetbox(1500, 1000));
    await deliver(r, 305);
    await smtp.waitFor(2);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    // Once the delivery is done: these two and no owner's mail.
    const mails = smtp.received;
    expect(mails.map(to).sort()).toEqual(['noc@example.com', 'oncall@example.com']);
    const noc = mails.find((m) => to(m) === 'noc@example.com')!;
    expect(noc.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 305 \u00b7 /);
    expect(text(noc)).toContain('NetBox could not say who owns the failing devices');
    expect(text(noc)).toContain('so this is the whole report.');
    // The whole report's failures, every site's devices.
    for (const device of ['sw-fra-1', 'sw-ams-1', 'sw-lon-1']) expect(text(noc)).toContain(device);
    const fallbacks = { reason: 'TIMEOUT', source: 'default' };
    expect(sampleValue(await r.relay.metrics.render(), 'compliance_relay_owner_fallbacks_total', fallbacks)).toBe(1);
  });

  it('a device owned through its site and its tenant is in both groups', async () => {
    stock(netbox, { tenantOwner: true });
    const r = await start();
    await deliver(r, 302);
    await smtp.waitFor(5);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    const mails = smtp.received;
    const carol = mails.find((m) => to(m) === 'carol@example.com')!;
    expect(text(carol)).toContain('you are the primary owner contact of tenant acme');
    expect(text(carol)).toContain('These figures are for every device you own in NetBox (1); with failures: sw-fra-1.');
    expect(carol.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 302 \u00b7 /);
    const fra = mails.find((m) => to(m) === 'alice@example.com,eve@example.com')!;
    expect(text(fra)).toContain('sw-fra-1');
    expect(mails.map(to).sort()).toEqual([
      'alice@example.com,eve@example.com',
      'bob@example.com',
      'carol@example.com',
      'noc@example.com',
      'oncall@example.com',
    ]);
  });

  it('preview, deliveries and check-config --online show the owner groups and why', async () => {
    stock(netbox);
    const r = await start({ ADMIN_TOKEN });
    const id = await deliver(r, 304);
    await smtp.waitFor(4);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    // The delivery's page names each group's recipients, devices and why.
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(Date.now()).cookie}`;
    const page = textOf(await (await fetch(`${r.url}/ui/deliveries/${id}`, { headers: { Cookie: cookie } })).text());
    expect(page).toContain('to alice@example.com, eve@example.com');
    expect(page).toContain('you are the primary owner contact of site fra1');
    expect(page).toContain('devices: sw-fra-1, sw-fra-2');
    await r.stop();
    relay = undefined;
    const env = {
      SMTP_URL: smtp.url,
      ROUTES_FILE: path.join(dir, 'routes.yaml'),
      NETBOX_URL: netbox.url,
      NETBOX_TOKEN: TOKEN,
      DATA_DIR: path.join(dir, 'data'),
    };
    const cli = async (args: string[]) => {
      const io = captureIo(env, dir);
      const code = await runCli(['node', 'compliance-relay', ...args], io);
      return { code, out: io.out(), err: io.err() };
    };

    const listed = await cli(['deliveries', '--json']);
    expect(listed.code).toBe(0);
    const {
      deliveries: [row],
    } = JSON.parse(listed.out) as {
      deliveries: {
        routes: { route: string; owners?: { group: string; to: string[]; why: string; devices: string[] } }[];
      }[];
    };
    expect(row.routes.find((m) => m.owners?.group === 'unowned')).toMatchObject({
      owners: { to: ['noc@example.com'], devices: ['sw-lon-1'], why: expect.stringContaining("this route's fallback") },
    });
    expect(row.routes.find((m) => m.owners?.to.includes('bob@example.com'))?.owners?.why).toBe(
      'you are the primary owner contact of site ams1',
    );

    const before = netbox.requests.length;
    const preview = await cli(['preview', '--id', String(id), '--route', 'owners', '--group', 'unowned', '--out', 'preview']);
    expect(preview.err).toBe('');
    expect(preview.out).toContain('Owner groups (as recorded when the delivery was planned; choose with --group):');
    expect(preview.out).toContain('* unowned: noc@example.com: no primary owner contact');
    expect(preview.out).toContain('bob@example.com: you are the primary owner contact of site ams1 (sw-ams-1)');
    expect(preview.out).toContain('Envelope: from');
    expect(fs.readFileSync(path.join(dir, 'preview', 'mail.txt'), 'utf8')).toContain('sw-lon-1');
    // The recorded groups were shown: NetBox was not asked who owns what.
    expect(netbox.requests.slice(before).some((q) => q.path.startsWith('/api/tenancy/'))).toBe(false);

    const online = await cli(['check-config', '--online']);
    expect(online.out).toContain(`Route owners, latest report 304 of source default (delivery ${id}):`);
    expect(online.out).toContain('alice@example.com, eve@example.com: you are the primary owner contact of site fra1 (sw-fra-1, sw-fra-2)');

    // A delivery file was never planned: its groups are resolved now, from NetBox, and nothing is stored.
    const file = path.join(dir, 'delivery.json');
    const specs = results();
    netbox.reports.set(305, { id: 305, created: '2026-03-06T15:11:18.123456Z', results: specs });
    fs.writeFileSync(
      file,
      buildBody({ version: '4.6', data: buildReportData({ id: 305, created: '2026-03-06T15:11:18.123456Z', ...countResults(specs) }) }),
    );
    const fresh = await cli(['preview', file, '--route', 'owners', '--out', 'preview2']);
    expect(fresh.err).toBe('');
    expect(fresh.out).toContain('Owner groups (resolved now from NetBox; nothing is stored; choose with --group):');
    expect(fresh.out).toContain('bob@example.com: you are the primary owner contact of site ams1');
  });

  it('a 4xx in the middle of the owner mails retries only the one refused, with the groups decided at first, even after a restart', async () => {
    stock(netbox);
    const r = await start({}, quickRetries(50, 100));
    smtp.setBehaviour((attempt) => (attempt === 2 ? { type: 'reject', code: 451, message: 'try again later' } : { type: 'accept' }));
    const id = await deliver(r, 303);
    await waitUntil(
      () => (r.workerOutcomes.some((o) => o.settled?.state === 'sent') ? true : undefined),
      15_000,
      'the delivery to be sent',
    );
    expect(r.workerOutcomes.map((o) => o.settled?.state)).toEqual(['retrying', 'sent']);
    const asked = netbox.requests.filter((q) => q.path.startsWith('/api/tenancy/')).length;
    expect(smtp.received.map(to).sort()).toEqual([
      'alice@example.com,eve@example.com',
      'bob@example.com',
      'noc@example.com',
      'oncall@example.com',
    ]);

    // The retry sent the refused group's mail from the recorded plan: NetBox was not asked again.
    const plan = await r.relay.store.listRouteMails([id]);
    expect(plan.filter((m) => m.ownerGroup && m.route.startsWith('owners~')).map((m) => m.state)).toEqual(['sent', 'sent', 'sent']);

    // Even if NetBox's owners change now, a requeue after a restart resends nothing and asks nobody.
    netbox.assignments.splice(0, netbox.assignments.length);
    await r.stop();
    const again = await start();
    expect(await again.relay.store.requeue(Date.now(), id)).toBe(1);
    again.relay.worker.kick();
    await waitUntil(
      async () => ((await again.relay.store.getDelivery(id))!.state === 'sent' ? true : undefined),
      10_000,
      'the requeued delivery',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.received).toHaveLength(4);
    expect(netbox.requests.filter((q) => q.path.startsWith('/api/tenancy/')).length).toBe(asked);
  });
});

describe('routes by owner when NetBox is down', () => {
  it('the fallback gets the whole report with a note, and the fallback is counted', async () => {
    const dir = makeTempDir('relay-owners-down-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    const smtp = await startSmtpPeer();
    const gone = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    const url = gone.url;
    await gone.close();
    const relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        ROUTES_FILE: path.join(dir, 'routes.yaml'),
        NETBOX_URL: url,
        NETBOX_TOKEN: TOKEN,
      },
      { dataDir: path.join(dir, 'data'), tune: quickNetbox(2000, 1000) },
    );
    try {
      const specs = results();
      const body = buildBody({
        version: '4.6',
        data: buildReportData({ id: 401, created: '2026-03-06T15:11:18.123456Z', ...countResults(specs) }),
      });
      expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
      // The owners' fallback gets the whole report; the core page (devices unknown) still goes, with everything.
      await smtp.waitFor(2);
      await waitUntil(() => relay.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
      const mails = smtp.received;
      expect(mails.map(to).sort()).toEqual(['noc@example.com', 'oncall@example.com']);
      const noc = mails.find((m) => m.envelope.to.join() === 'noc@example.com')!;
      expect(noc.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 401 \u00b7 /);
      expect(text(noc)).toContain('NetBox could not say who owns the failing devices');
      expect(text(noc)).toContain('so this is the whole report.');
      const page = mails.find((m) => m.envelope.to.join() === 'oncall@example.com')!;
      expect(text(page)).toContain("NetBox could not say which failing devices the route's device condition selects");
      expect(page.parsed.subject).toMatch(/^First: 50\.0%, .* \u2014 report 401 \u00b7 /);
      const fallbacks = { reason: 'UNREACHABLE', source: 'default' };
      expect(sampleValue(await relay.relay.metrics.render(), 'compliance_relay_owner_fallbacks_total', fallbacks)).toBe(1);
    } finally {
      await relay.stop();
      await smtp.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a route by owner that matches on the source tags', () => {
  it('preview and check-config --online show the groups the worker then mails, for a report not yet planned', async () => {
    const dir = makeTempDir('relay-owners-tags-');
    const smtp = await startSmtpPeer();
    const netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    let relay: TestRelay | undefined;
    try {
      stock(netbox);
      fs.writeFileSync(path.join(dir, 'prod-token'), TOKEN);
      fs.writeFileSync(
        path.join(dir, 'sources.yaml'),
        `sources:\n  - name: prod\n    netbox_url: ${netbox.url}\n    token_file: ${path.join(dir, 'prod-token')}\n    tags: { env: prod }\n`,
      );
      fs.writeFileSync(
        path.join(dir, 'routes.yaml'),
        `routes:
  - name: prod-owners
    match: { source_tags: { env: prod } }
    to:
      netbox_contacts: { role: owner, on: [device, site, tenant], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`,
      );
      const env = {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Compliance <relay@example.com>',
        SOURCES_FILE: path.join(dir, 'sources.yaml'),
        ROUTES_FILE: path.join(dir, 'routes.yaml'),
        DATA_DIR: path.join(dir, 'data'),
      };
      // Report 306 of source prod is stored, and no worker has planned it yet.
      const specs = results();
      const created = '2026-03-06T15:11:18.123456Z';
      netbox.reports.set(306, { id: 306, created, results: specs });
      const body = buildBody({ version: '4.6', data: buildReportData({ id: 306, created, ...countResults(specs) }) });
      const store = SqliteStore.open({ dataDir: env.DATA_DIR });
      const { id } = await store.insertDelivery({
        ...(parseDelivery(body, 'prod') as ReportDelivery),
        sender: '127.0.0.1',
        body,
        receivedAt: Date.now(),
      });
      await store.close();
      const cli = async (args: string[]) => {
        const io = captureIo(env, dir);
        const code = await runCli(['node', 'compliance-relay', ...args], io);
        return { code, out: io.out(), err: io.err() };
      };
      const groups = [
        'alice@example.com, eve@example.com: you are the primary owner contact of site fra1 (sw-fra-1, sw-fra-2)',
        'bob@example.com: you are the primary owner contact of site ams1 (sw-ams-1)',
        'unowned: noc@example.com: no primary owner contact',
      ];

      const preview = await cli(['preview', '--id', String(id), '--route', 'prod-owners', '--out', 'preview']);
      expect(preview.err).toBe('');
      expect(preview.out).toContain('Owner groups (resolved now from NetBox; nothing is stored; choose with --group):');
      for (const group of groups) expect(preview.out).toContain(group);

      const online = await cli(['check-config', '--online']);
      expect(online.out).toContain(`Route prod-owners, latest report 306 of source prod (delivery ${id}):`);
      for (const group of groups) expect(online.out).toContain(group);

      // The worker mails those same groups.
      relay = await startTestRelay(env, { dataDir: env.DATA_DIR });
      await smtp.waitFor(3);
      expect(smtp.received.map(to).sort()).toEqual(['alice@example.com,eve@example.com', 'bob@example.com', 'noc@example.com']);
    } finally {
      await relay?.stop();
      await netbox.close();
      await smtp.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

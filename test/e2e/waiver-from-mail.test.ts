/**
 * An accepted exception made the way a reader makes one: from the mail's "Accept as an exception…" link,
 * in a real Chromium (JavaScript off), through the login and the CSRF-checked form. The next reports'
 * mails (a real smtp-server) list it, their verdict and on-change decision ignore it, the owner of the
 * device gets no mail for it; with the injected clock past its end, it comes back as newly failing.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { Clock } from '../../src/shared';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { AMS, FRA, NTP, OWNER, TELNET, WAIVER_ROUTES, startWaiverPeers } from '../helpers/waiver-scenario';
import { countResults, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'waiver-e2e-admin-token-0123456789';
const RELAY_URL = 'https://relay.example.com';

/** lab-sw1 (fra1, Alice's) and sw2 (ams1, Bob's) run both tests; `failing` lists "test/device". */
function results(failing: string[]): ResultSpec[] {
  const devices: [number, string][] = [
    [101, 'lab-sw1'],
    [102, 'sw2'],
  ];
  return devices.flatMap(([id, name], i) =>
    [TELNET, NTP].map((test, j) => ({
      id: 9000 + 10 * i + j,
      test,
      device: { id, name },
      passed: !failing.includes(`${test.name}/${name}`),
    })),
  );
}

const text = (m: ReceivedMail) => String(m.parsed.text);
const to = (m: ReceivedMail) => [...m.envelope.to].sort().join(',');

describe('a failing HIGH result accepted from the mail`s link, in a real browser', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay;
  let browser: Browser;
  let peers: Awaited<ReturnType<typeof startWaiverPeers>>;
  const clock: Clock & { at: number } = { at: Date.parse('2026-11-27T09:00:00Z'), now: () => clock.at };

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    peers = await startWaiverPeers('waiver-e2e-', WAIVER_ROUTES, ADMIN_TOKEN);
    ({ smtp, netbox } = peers);
    const role = { id: 5, name: 'Switch', slug: 'switch' };
    netbox.devices.set(101, { id: 101, name: 'lab-sw1', site: FRA, role, tenant: null, platform: null, tags: [] });
    netbox.devices.set(102, { id: 102, name: 'sw2', site: AMS, role, tenant: null, platform: null, tags: [] });
    netbox.contacts.set(11, { id: 11, name: 'Alice', email: 'alice@example.com' });
    netbox.contacts.set(12, { id: 12, name: 'Bob', email: 'bob@example.com' });
    netbox.assignments.push({ id: 1, objectType: 'dcim.site', objectId: FRA.id, contactId: 11, role: OWNER, priority: 'primary' });
    netbox.assignments.push({ id: 2, objectType: 'dcim.site', objectId: AMS.id, contactId: 12, role: OWNER, priority: 'primary' });
    // The relay's public name (behind a proxy); the browser opens the same path on the test listener.
    relay = await startTestRelay({ ...peers.env, RELAY_URL }, { clock, dataDir: path.join(peers.dir, 'data') });
  });
  afterEach(async () => {
    await relay.stop();
    await peers.close();
  });

  /** Report `id`, created at `created` (the clock an hour later); resolves with its mails. */
  async function deliver(id: number, created: string, failing: string[], mails: number): Promise<ReceivedMail[]> {
    clock.at = Date.parse(created) + 3_600_000;
    const specs = results(failing);
    netbox.reports.set(id, { id, created, results: specs });
    const before = smtp.received.length;
    const outcomes = relay.workerOutcomes.length;
    const body = buildBody({ version: '4.6', timestamp: created, data: buildReportData({ id, created, ...countResults(specs) }) });
    expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length > outcomes || undefined, 15_000, `report ${id} settled`);
    await smtp.waitFor(before + mails);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received.length).toBe(before + mails);
    return smtp.received.slice(before);
  }

  it('is listed, ignored by the verdict, on-change and the owner mail, and comes back newly failing after its end', async () => {
    const both = ['telnet-disabled/lab-sw1', 'ntp-synced/sw2'];
    const first = await deliver(1, '2026-11-27T08:00:00Z', both, 4);
    const link = /Accept as an exception: (\S+test=telnet-disabled\S*)/.exec(text(first.find((m) => to(m) === 'team@example.com')!))?.[1];
    expect(link).toBe(`${RELAY_URL}/ui/waivers/new?source=default&test=telnet-disabled&device=lab-sw1`);

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${relay.url}/ui/login`);
    await page.fill('input[name=token]', ADMIN_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/ui', { waitUntil: 'load' });
    // The link carries names only: the form opens pre-filled, the session (and its CSRF token) does the rest.
    const target = new URL(link!);
    await page.goto(`${relay.url}${target.pathname}${target.search}`);
    await expect(page.inputValue('input[name=test]')).resolves.toBe('telnet-disabled');
    await expect(page.inputValue('input[name=device]')).resolves.toBe('lab-sw1');
    await page.fill('input[name=until]', '2026-12-01');
    await page.fill('textarea[name=reason]', 'Lab switch, retired soon');
    await page.fill('input[name=author]', 'alice');
    await page.click('button:has-text("Add waiver")');
    await page.waitForURL((url) => url.pathname.startsWith('/ui/waivers') && !url.pathname.endsWith('/new'), { waitUntil: 'load' });
    await expect(page.textContent('body')).resolves.toContain('telnet-disabled');
    await context.close();

    // Report 2: lab-sw1 passes telnet once. Its pair is accepted, so nothing was "fixed": on-change stays quiet.
    const second = await deliver(2, '2026-11-28T08:00:00Z', ['ntp-synced/sw2'], 2);
    expect(second.map(to).sort()).toEqual(['bob@example.com', 'team@example.com']);

    // Report 3: it fails again. Listed as accepted, verdict "same", no on-change mail, nothing for Alice.
    const third = await deliver(3, '2026-11-29T08:00:00Z', both, 2);
    expect(third.map(to).sort()).toEqual(['bob@example.com', 'team@example.com']);
    const team3 = third.find((m) => to(m) === 'team@example.com')!;
    expect(team3.parsed.headers.get('x-compliance-verdict')).toBe('same');
    expect(text(team3)).toMatch(/ACCEPTED EXCEPTIONS: 1 waived result, 1 ending within 7 days\n {2}\* telnet-disabled \[HIGH\] on lab-sw1/);
    expect(text(team3)).toContain('until 2026-12-01, accepted by alice: Lab switch, retired soon');
    expect(text(team3)).toMatch(/HIGH\s+1\/2\s+50\.0%.*\(1 waived\)/);
    expect(text(third.find((m) => to(m) === 'bob@example.com')!)).not.toContain('telnet-disabled');

    // The day after its end: back as newly failing, "waiver expired"; on-change mails, Alice is told.
    const fourth = await deliver(4, '2026-12-02T08:00:00Z', both, 4);
    expect(fourth.map(to).sort()).toEqual(['alice@example.com', 'bob@example.com', 'changes@example.com', 'team@example.com']);
    const team4 = fourth.find((m) => to(m) === 'team@example.com')!;
    expect(team4.parsed.headers.get('x-compliance-verdict')).toBe('worse');
    expect(text(team4)).toMatch(/lab-sw1 {2}\S+ {2}\(waiver expired\)/);
    expect(text(team4)).not.toContain('ACCEPTED EXCEPTIONS');
  });
});

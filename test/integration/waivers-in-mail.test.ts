/**
 * Accepted exceptions in the mails, on the real relay (a real smtp-server, the NetBox double, an
 * injected clock): a waived pair leaves the verdict, the on-change decision and the owner mails, is
 * listed under "Accepted exceptions" with who/why/until, and comes back as newly failing ("waiver
 * expired") the day after its end. Once on SQLite in a temp dir; once on PostgreSQL with two relays
 * sharing the database: the waivers are added through the first relay's admin API, the reports go to the second.
 */
import path from 'node:path';
import type { Clock } from '../../src/shared';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { AMS, FRA, NTP, OWNER, TELNET, WAIVER_ROUTES, postWaiver, startWaiverPeers } from '../helpers/waiver-scenario';
import { countResults, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const ADMIN_TOKEN = 'waivers-mail-admin-token-0123456789';
const SSH = { id: 3, name: 'ssh-v2-only', severity: 'HIGH' as const };
const DEVICES: [number, string, typeof FRA][] = [
  [101, 'lab-sw1', FRA],
  [102, 'sw2', AMS],
  [103, 'sw3', AMS],
];

/** Every device runs every test; `failing` lists the "test/device" pairs that fail. */
function results(failing: string[]): ResultSpec[] {
  return DEVICES.flatMap(([id, name], i) =>
    [TELNET, NTP, SSH].map((test, j) => ({
      id: 7000 + 10 * i + j,
      test,
      device: { id, name },
      passed: !failing.includes(`${test.name}/${name}`),
    })),
  );
}

const text = (m: ReceivedMail) => String(m.parsed.text);
const to = (m: ReceivedMail) => [...m.envelope.to].sort().join(',');

describe.each([
  ['SQLite, one relay', 1],
  ['PostgreSQL, two relays', 2],
])('accepted exceptions in the mails (%s)', (_store, replicas) => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relays: TestRelay[] = [];
  let schema: TestSchema | undefined;
  let peers: Awaited<ReturnType<typeof startWaiverPeers>>;
  const clock: Clock & { at: number } = { at: 0, now: () => clock.at };

  beforeEach(async () => {
    peers = await startWaiverPeers('relay-waivers-mail-', WAIVER_ROUTES, ADMIN_TOKEN);
    ({ smtp, netbox } = peers);
    for (const [id, name, site] of DEVICES)
      netbox.devices.set(id, { id, name, site, role: { id: 5, name: 'Switch', slug: 'switch' }, tenant: null, platform: null, tags: [] });
    netbox.contacts.set(11, { id: 11, name: 'Alice', email: 'alice@example.com' });
    netbox.contacts.set(12, { id: 12, name: 'Bob', email: 'bob@example.com' });
    netbox.assignments.push({ id: 1, objectType: 'dcim.site', objectId: FRA.id, contactId: 11, role: OWNER, priority: 'primary' });
    netbox.assignments.push({ id: 2, objectType: 'dcim.site', objectId: AMS.id, contactId: 12, role: OWNER, priority: 'primary' });
    clock.at = Date.parse('2026-11-27T09:00:00Z');
    schema = replicas > 1 ? await createTestSchema('waivers_mail') : undefined;
    const env = {
      ...peers.env,
      RELAY_URL: 'https://relay.example.com/',
      ...(schema ? { DATABASE_URL: schema.url } : {}),
    };
    relays = [];
    for (let i = 0; i < replicas; i += 1) relays.push(await startTestRelay(env, { clock, dataDir: path.join(peers.dir, `data${i}`) }));
  });
  afterEach(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    await schema?.drop();
    await peers.close();
  });

  /** Posts report `id` created at `created` (the clock is an hour later) and waits for its `mails` mails. */
  async function deliver(id: number, created: string, failing: string[], mails: number): Promise<ReceivedMail[]> {
    clock.at = Date.parse(created) + 3_600_000;
    const specs = results(failing);
    netbox.reports.set(id, { id, created, results: specs });
    const before = smtp.received.length;
    const settled = () => relays.reduce((n, r) => n + r.workerOutcomes.length, 0);
    const outcomes = settled();
    const body = buildBody({ version: '4.6', timestamp: created, data: buildReportData({ id, created, ...countResults(specs) }) });
    // Reports go to the last relay; waivers are made on the first.
    expect((await postWebhook(relays[relays.length - 1].webhookUrl, body)).status).toBe(202);
    await waitUntil(() => settled() > outcomes || undefined, 15_000, `report ${id} settled`);
    await smtp.waitFor(before + mails);
    // Nothing more arrives for this report than expected.
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received.length).toBe(before + mails);
    return smtp.received.slice(before);
  }

  const addWaiver = (body: Record<string, unknown>) => postWaiver(relays[0].url, ADMIN_TOKEN, body);

  it('leaves a waived HIGH pair out of the verdict, on-change and owner mails, lists it, and brings it back the day after it ends', async () => {
    // Report 1: ntp fails on sw2, ssh on sw2 and sw3; every route mails (the first report, with failures),
    // the owners route to Bob (ams1) only: nothing fails at fra1.
    const first = await deliver(1, '2026-11-27T08:00:00Z', ['ntp-synced/sw2', 'ssh-v2-only/sw2', 'ssh-v2-only/sw3'], 3);
    expect(first.map(to).sort()).toEqual(['bob@example.com', 'changes@example.com', 'team@example.com']);
    const team1 = first.find((m) => to(m) === 'team@example.com')!;
    // Each failing result links to the dashboard's pre-filled form, by names only.
    expect(text(team1)).toContain(
      'Accept as an exception: https://relay.example.com/ui/waivers/new?source=default&test=ntp-synced&device=sw2',
    );
    const html1 = String(team1.parsed.html)
      .replace(/&#x3D;/g, '=')
      .replace(/&amp;/g, '&');
    expect(html1).toContain('href="https://relay.example.com/ui/waivers/new?source=default&test=ntp-synced&device=sw2"');

    // The lab switch will fail telnet until it is retired; ssh-v2-only is accepted on every device.
    await addWaiver({
      test: 'telnet-disabled',
      device: 'lab-sw1',
      until: '2026-12-01',
      reason: 'Lab switch, retired soon',
      author: 'alice',
    });
    await addWaiver({ test: 'ssh-v2-only', allDevices: true, until: '2027-03-31', reason: 'Old images until the upgrade', author: 'bob' });
    // Every relay on the store lists them.
    const listed = await fetch(`${relays[relays.length - 1].url}/api/waivers?status=active`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(((await listed.json()) as { waivers: unknown[] }).waivers).toHaveLength(2);

    // Report 2: telnet newly fails on lab-sw1, waived. Without the waiver this is "worse" and on-change would mail.
    const second = await deliver(
      2,
      '2026-11-28T08:00:00Z',
      ['telnet-disabled/lab-sw1', 'ntp-synced/sw2', 'ssh-v2-only/sw2', 'ssh-v2-only/sw3'],
      2,
    );
    expect(second.map(to).sort()).toEqual(['bob@example.com', 'team@example.com']);
    const team2 = second.find((m) => to(m) === 'team@example.com')!;
    expect(team2.parsed.headers.get('x-compliance-verdict')).toBe('same');
    const body2 = text(team2);
    expect(body2).toContain(
      'Same as report 1: 55.6% passed, was 66.7% (\u221211.1 pts, +1 failing); HIGH 50.0%, was 66.7%. The verdict leaves out 3 accepted exceptions.',
    );
    expect(body2).toContain('ACCEPTED EXCEPTIONS: 3 waived results, 1 ending within 7 days');
    expect(body2).toMatch(
      /\* telnet-disabled \[HIGH\] on lab-sw1 \(ends in 3 days\)\n\s+until 2026-12-01, accepted by alice: Lab switch, retired soon/,
    );
    expect(body2).toContain('* ssh-v2-only [HIGH] on all devices (2): sw2, sw3');
    // The HIGH failure hidden on two devices is named in the header, in every mail.
    const named = 'An accepted exception hides the HIGH failure ssh-v2-only on 2 devices: sw2, sw3 (by bob, until 2027-03-31';
    expect(body2).toContain(named);
    // The ratios stay validity's, with the waived count beside them.
    expect(body2).toMatch(/HIGH\s+3\/6\s+50\.0%.*\(3 waived\)/);
    // The failing list holds only what is not waived.
    expect(body2).toContain('WHAT FAILED: 1 failing result in 1 test');
    expect(body2).not.toMatch(/WHAT FAILED[\s\S]*telnet-disabled[\s\S]*ACCEPTED/);
    // The owner of lab-sw1 (fra1) gets nothing: its only failure is accepted; Bob gets ntp, not ssh.
    const bob = second.find((m) => to(m) === 'bob@example.com')!;
    expect(text(bob)).toContain('ntp-synced');
    expect(text(bob)).not.toContain('ACCEPTED EXCEPTIONS');
    expect(text(bob)).toContain(named);

    // Report 3, the day after the telnet waiver ended: the pair is back as newly failing, on-change mails again.
    const third = await deliver(
      3,
      '2026-12-02T08:00:00Z',
      ['telnet-disabled/lab-sw1', 'ntp-synced/sw2', 'ssh-v2-only/sw2', 'ssh-v2-only/sw3'],
      4,
    );
    expect(third.map(to).sort()).toEqual(['alice@example.com', 'bob@example.com', 'changes@example.com', 'team@example.com']);
    const team3 = third.find((m) => to(m) === 'team@example.com')!;
    expect(team3.parsed.headers.get('x-compliance-verdict')).toBe('worse');
    expect(text(team3)).toContain('lab-sw1  ');
    expect(text(team3)).toMatch(/lab-sw1 {2}\S+ {2}\(waiver expired\)/);
    expect(text(team3)).toContain('ACCEPTED EXCEPTIONS: 2 waived results');
    expect(text(team3)).not.toMatch(/ACCEPTED EXCEPTIONS[\s\S]*telnet-disabled/);
    expect(text(third.find((m) => to(m) === 'alice@example.com')!)).toContain('telnet-disabled');
  }, 60_000);
});

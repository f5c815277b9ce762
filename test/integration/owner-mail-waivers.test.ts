/**
 * Accepted exceptions in the owners' mails, on the real relay (a real smtp-server, the NetBox double, SQLite in a
 * temp dir, an injected clock). An owner's failures are their own: the report's accepted exceptions are not listed
 * or counted in its mail. But a HIGH failure that one all-devices waiver hides on several devices is never hidden
 * silently: every mail names it under its headline, owner mails included (docs/waivers.md), in text and HTML alike.
 */
import path from 'node:path';
import type { Clock } from '../../src/shared';
import { textOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { AMS, FRA, NTP, OWNER, TELNET, postWaiver, startWaiverPeers } from '../helpers/waiver-scenario';
import { countResults, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const ADMIN_TOKEN = 'owner-mail-waivers-admin-token-0123456789';
const SSH = { id: 3, name: 'ssh-v2-only', severity: 'HIGH' as const };
const LON = { id: 3, name: 'London 1', slug: 'lon1' };
/** Alice owns fra1 (lab-sw1), Bob ams1 (sw2, sw3), Carol lon1 (sw4). */
const DEVICES: [number, string, typeof FRA][] = [
  [101, 'lab-sw1', FRA],
  [102, 'sw2', AMS],
  [103, 'sw3', AMS],
  [104, 'sw4', LON],
];
const OWNERS: [number, string, typeof FRA][] = [
  [11, 'alice', FRA],
  [12, 'bob', AMS],
  [13, 'carol', LON],
];
const ROUTES = `
routes:
  - name: team
    to: team@example.com
    continue: true
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [site], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`;
/**
 * Each owner has a failure of their own no waiver covers (ntp-synced), so each is mailed; telnet-disabled fails on
 * lab-sw1 (Alice's) and ssh-v2-only on sw2 and sw3 (both Bob's).
 */
const FAILING = ['telnet-disabled/lab-sw1', 'ntp-synced/lab-sw1', 'ntp-synced/sw2', 'ssh-v2-only/sw2', 'ssh-v2-only/sw3', 'ntp-synced/sw4'];
/** How the header names the HIGH failure the all-devices waiver hides (templates/partials/waivers-header-*.hbs). */
const NAMED =
  'An accepted exception hides the HIGH failure ssh-v2-only on 2 devices: sw2, sw3 (by bob, until 2027-03-31: Old images until the upgrade).';

/** Every device runs every test; `failing` lists the "test/device" pairs that fail. */
function results(failing: string[]): ResultSpec[] {
  return DEVICES.flatMap(([id, name], i) =>
    [TELNET, NTP, SSH].map((test, j) => ({
      id: 8000 + 10 * i + j,
      test,
      device: { id, name },
      passed: !failing.includes(`${test.name}/${name}`),
    })),
  );
}

const text = (m: ReceivedMail) => String(m.parsed.text);
const html = (m: ReceivedMail) => textOf(String(m.parsed.html));
const mailTo = (mails: ReceivedMail[], address: string) => mails.find((m) => m.envelope.to.join() === address)!;

describe("accepted exceptions in the owners' mails", () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay;
  let peers: Awaited<ReturnType<typeof startWaiverPeers>>;
  const clock: Clock & { at: number } = { at: 0, now: () => clock.at };

  beforeEach(async () => {
    peers = await startWaiverPeers('relay-owner-waivers-', ROUTES, ADMIN_TOKEN);
    ({ smtp, netbox } = peers);
    for (const [id, name, site] of DEVICES)
      netbox.devices.set(id, { id, name, site, role: { id: 5, name: 'Switch', slug: 'switch' }, tenant: null, platform: null, tags: [] });
    for (const [id, name, site] of OWNERS) {
      netbox.contacts.set(id, { id, name, email: `${name}@example.com` });
      netbox.assignments.push({ id, objectType: 'dcim.site', objectId: site.id, contactId: id, role: OWNER, priority: 'primary' });
    }
    clock.at = Date.parse('2026-11-27T09:00:00Z');
    relay = await startTestRelay(peers.env, { clock, dataDir: path.join(peers.dir, 'data') });
  });
  afterEach(async () => {
    await relay.stop();
    await peers.close();
  });

  /** Posts report `id` created at `created` (the clock an hour later) and returns its mails: the team's and each owner's. */
  async function deliver(id: number, created: string): Promise<ReceivedMail[]> {
    clock.at = Date.parse(created) + 3_600_000;
    const specs = results(FAILING);
    netbox.reports.set(id, { id, created, results: specs });
    const before = smtp.received.length;
    const outcomes = relay.workerOutcomes.length;
    const body = buildBody({ version: '4.6', timestamp: created, data: buildReportData({ id, created, ...countResults(specs) }) });
    expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length > outcomes || undefined, 15_000, `report ${id} settled`);
    await smtp.waitFor(before + 4);
    const mails = smtp.received.slice(before);
    expect(mails.map((m) => m.envelope.to.join()).sort()).toEqual([
      'alice@example.com',
      'bob@example.com',
      'carol@example.com',
      'team@example.com',
    ]);
    return mails;
  }

  const addWaiver = (body: Record<string, unknown>) => postWaiver(relay.url, ADMIN_TOKEN, body);

  it("names a HIGH failure an all-devices waiver hides in every owner's mail, text and HTML, without the report's accepted exceptions as its own", async () => {
    // Report 1: only lab-sw1's telnet failure is accepted, on that one device: nothing must be named.
    await addWaiver({ test: 'telnet-disabled', device: 'lab-sw1', until: '2027-01-31', reason: 'Lab switch', author: 'alice' });
    const first = await deliver(1, '2026-11-27T08:00:00Z');
    expect(text(mailTo(first, 'team@example.com'))).toContain('ACCEPTED EXCEPTIONS: 1 waived result');
    for (const owner of ['alice', 'bob', 'carol']) {
      const mail = mailTo(first, `${owner}@example.com`);
      // No waivers header and no accepted exceptions: not even Alice's, whose device the waiver is on.
      for (const body of [text(mail), html(mail)]) {
        expect(body).not.toContain('An accepted exception hides');
        expect(body).not.toMatch(/accepted exceptions/i);
        expect(body).not.toContain('telnet-disabled');
        expect(body).not.toContain('waived');
      }
      expect(mail.parsed.subject).not.toContain('accepted');
    }

    // ssh-v2-only is accepted on every device: it hides that HIGH failure on Bob's sw2 and sw3.
    await addWaiver({ test: 'ssh-v2-only', allDevices: true, until: '2027-03-31', reason: 'Old images until the upgrade', author: 'bob' });
    const second = await deliver(2, '2026-11-28T08:00:00Z');
    const team = mailTo(second, 'team@example.com');
    // The whole report's mail names it and lists the three accepted exceptions, counted in its subject.
    expect(text(team)).toContain(NAMED);
    expect(text(team)).toContain('ACCEPTED EXCEPTIONS: 3 waived results');
    expect(html(team)).toContain('Accepted exceptions: 3 waived results');
    expect(team.parsed.subject).toContain(', 3 accepted');

    const bob = mailTo(second, 'bob@example.com');
    for (const body of [text(bob), html(bob)]) {
      // (a) Bob's devices are the ones it hides the failure on: his mail names it, as the header words it.
      expect(body).toContain(NAMED);
      // (b) His failures are his own: the report's accepted exceptions are neither listed nor counted as his.
      expect(body).not.toMatch(/accepted exceptions/i);
      expect(body).not.toContain('waived');
      expect(body).not.toContain('telnet-disabled');
      expect(body).toContain('ntp-synced');
    }
    expect(text(bob).match(/An accepted exception hides/g)).toHaveLength(1);
    expect(bob.parsed.subject).not.toContain('accepted');
    // (d) His trend counts what his mail lists, as his subject and ratios do: ntp-synced on sw2, in both reports. The
    // accepted ssh-v2-only counts as passed on sw2 (which fails something else) and on sw3 (which fails nothing else) alike.
    expect(bob.parsed.subject).toMatch(/^Same: 83\.3%, 1 failing, no HIGH \u2014 report 2/);
    for (const body of [text(bob), html(bob)]) {
      expect(body).toContain('Same as report 1 on these devices: 1 failing, was 1.');
      expect(body).not.toContain('leaves out');
    }

    // (c) Alice and Carol: the waiver hides nothing on their devices, and still their mails name it (every mail
    // does, owner mails included), without any accepted exception of the report as theirs.
    for (const owner of ['alice', 'carol']) {
      const mail = mailTo(second, `${owner}@example.com`);
      for (const body of [text(mail), html(mail)]) {
        expect(body).toContain(NAMED);
        expect(body).not.toMatch(/accepted exceptions/i);
        expect(body).not.toContain('waived');
        expect(body).not.toContain('telnet-disabled');
      }
      expect(mail.parsed.subject).not.toContain('accepted');
    }
  }, 60_000);
});

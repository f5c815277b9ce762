/**
 * Accepted exceptions are accepted everywhere the mail counts, on the real relay (a real smtp-server, the
 * NetBox double, SQLite in a temp dir): the subject and `X-Compliance-High-Failed` count what the mail
 * lists as failing with the accepted ones apart, and a `notify: on-failure` route does not mail a report
 * whose only failures are waived (its recorded decision says why). The ratios stay NetBox's.
 */
import path from 'node:path';
import type { Clock } from '../../src/shared';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { NTP, TELNET, postWaiver, startWaiverPeers } from '../helpers/waiver-scenario';
import { countResults, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const ADMIN_TOKEN = 'waived-only-admin-token-0123456789';
const DEVICES: [number, string][] = [
  [101, 'lab-sw1'],
  [102, 'sw2'],
  [103, 'sw3'],
];
const ROUTES = `
routes:
  - name: pager
    to: pager@example.com
    notify: on-failure
    continue: true
  - name: team
    to: team@example.com
`;

/** Every device runs both tests; `failing` lists the "test/device" pairs that fail. */
function results(failing: string[]): ResultSpec[] {
  return DEVICES.flatMap(([id, name], i) =>
    [TELNET, NTP].map((test, j) => ({
      id: 9000 + 10 * i + j,
      test,
      device: { id, name },
      passed: !failing.includes(`${test.name}/${name}`),
    })),
  );
}

const to = (m: ReceivedMail) => [...m.envelope.to].sort().join(',');

describe('waived failures are accepted everywhere the mail counts', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay;
  let peers: Awaited<ReturnType<typeof startWaiverPeers>>;
  const clock: Clock & { at: number } = { at: Date.parse('2026-11-27T09:00:00Z'), now: () => clock.at };

  beforeEach(async () => {
    peers = await startWaiverPeers('relay-waived-only-', ROUTES, ADMIN_TOKEN);
    ({ smtp, netbox } = peers);
    relay = await startTestRelay(peers.env, { clock, dataDir: path.join(peers.dir, 'data') });
  });
  afterEach(async () => {
    await relay.stop();
    await peers.close();
  });

  /** Posts report `id` (the clock an hour after `created`), waits for it to settle and returns its mails and delivery id. */
  async function deliver(id: number, created: string, failing: string[]): Promise<{ mails: ReceivedMail[]; deliveryId: number }> {
    clock.at = Date.parse(created) + 3_600_000;
    const specs = results(failing);
    netbox.reports.set(id, { id, created, results: specs });
    const before = smtp.received.length;
    const outcomes = relay.workerOutcomes.length;
    const body = buildBody({ version: '4.6', timestamp: created, data: buildReportData({ id, created, ...countResults(specs) }) });
    const res = await postWebhook(relay.webhookUrl, body);
    expect(res.status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length > outcomes || undefined, 15_000, `report ${id} settled`);
    return { mails: smtp.received.slice(before), deliveryId: res.json.id };
  }

  const addWaiver = (body: Record<string, unknown>) => postWaiver(relay.url, ADMIN_TOKEN, body);

  it('counts waived failures apart in the subject and header, and an on-failure route does not mail them alone', async () => {
    // Report 1: telnet fails on lab-sw1 and sw2 (HIGH): both routes mail.
    const first = await deliver(1, '2026-11-27T08:00:00Z', ['telnet-disabled/lab-sw1', 'telnet-disabled/sw2']);
    expect(first.mails.map(to).sort()).toEqual(['pager@example.com', 'team@example.com']);
    expect(first.mails[0].parsed.headers.get('x-compliance-high-failed')).toBe('2');

    await addWaiver({ test: 'telnet-disabled', device: 'lab-sw1', until: '2027-03-31', reason: 'Lab switch', author: 'alice' });

    // Report 2: the same two fail; one is accepted (also on the previous report: nothing fixed). One HIGH failing, one accepted.
    const second = await deliver(2, '2026-11-28T08:00:00Z', ['telnet-disabled/lab-sw1', 'telnet-disabled/sw2']);
    expect(second.mails.map(to).sort()).toEqual(['pager@example.com', 'team@example.com']);
    const team2 = second.mails.find((m) => to(m) === 'team@example.com')!;
    expect(team2.parsed.subject).toMatch(/^Same: 66\.7% \(±0\.0\), 1 HIGH failing, 1 accepted \u2014 report 2 \u00b7 /);
    expect(team2.parsed.headers.get('x-compliance-high-failed')).toBe('1');
    // The ratios stay NetBox's.
    expect(team2.parsed.headers.get('x-compliance-pass-percent')).toBe('66.7');

    await addWaiver({ test: 'telnet-disabled', device: 'sw2', until: '2027-03-31', reason: 'Replaced next week', author: 'bob' });

    // Report 3: the same two fail, both accepted: the on-failure route holds its mail back and says why.
    const sent = smtp.received.length;
    const third = await deliver(3, '2026-11-29T08:00:00Z', ['telnet-disabled/lab-sw1', 'telnet-disabled/sw2']);
    // Nothing more arrives for it than the team's mail.
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received.slice(sent).map(to)).toEqual(['team@example.com']);
    const team3 = third.mails[0];
    expect(team3.parsed.subject).toMatch(/, 0 failing, 2 accepted \u2014 report 3 \u00b7 /);
    expect(team3.parsed.headers.get('x-compliance-high-failed')).toBe('0');
    const records = await relay.relay.store.listRouteMails([third.deliveryId]);
    expect(records.find((r) => r.route === 'pager')).toMatchObject({
      outcome: 'suppressed',
      reason: 'every failure an accepted exception (notify: on-failure)',
    });
  }, 60_000);
});

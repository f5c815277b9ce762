import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { buildContosoAppEnv, CONTOSO_APP, startOAuth2Double, type OAuth2Double } from '../helpers/oauth2-double';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const OWNERS = 60;
const NTP = { id: 1, name: 'ntp-servers', severity: 'HIGH' as const };
/** The relay's outage backoff starts at 30-60 s (a minute's base, equal jitter): a paced retry comes well before it. */
const OUTAGE_FIRST_PAUSE_MS = 30_000;

const ROUTES = `
routes:
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [device], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`;

/** A report failing on each of `OWNERS` devices, each device with its own primary owner: one owner mail each. */
function stockOwners(netbox: NetboxDouble): ResultSpec[] {
  const site = { id: 1, name: 'Frankfurt 1', slug: 'fra1' };
  const role = { id: 5, name: 'Access switch', slug: 'access-switch' };
  const owner = { id: 1, name: 'Owner', slug: 'owner' };
  const results: ResultSpec[] = [];
  for (let i = 1; i <= OWNERS; i += 1) {
    netbox.devices.set(i, { id: i, name: `sw-${i}`, site, role, tenant: null, platform: { id: 1, name: 'EOS', slug: 'eos' }, tags: [] });
    netbox.contacts.set(i, { id: i, name: `Owner ${i}`, email: `owner-${i}@example.com` });
    netbox.assignments.push({ id: i, objectType: 'dcim.device', objectId: i, contactId: i, role: owner, priority: 'primary' });
    results.push({ id: 9000 + i, test: NTP, device: { id: i, name: `sw-${i}` }, passed: false });
  }
  return results;
}

async function postReport(relay: TestRelay, netbox: NetboxDouble, id: number, results: ResultSpec[]): Promise<void> {
  const created = '2026-03-06T15:11:18.123456Z';
  netbox.reports.set(id, { id, created, results });
  const body = buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
  expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
}

describe('throttled means paced: a server that says when to come back is tried again then', () => {
  let dir: string;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  let graph: OAuth2Double | undefined;
  let smtp: SmtpPeer | undefined;

  beforeEach(async () => {
    dir = makeTempDir('relay-pacing-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
  });
  afterEach(async () => {
    await relay?.stop();
    await graph?.close();
    await smtp?.close();
    await netbox.close();
    relay = graph = smtp = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const netboxEnv = () => ({ ROUTES_FILE: path.join(dir, 'routes.yaml'), NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN });

  it('Graph limited to 30 mails a window (429 with Retry-After): 60 owner mails each posted once, each retry when Graph said', async () => {
    // Exchange Online's 30 messages a minute, on a 5 s window so that the test takes seconds; the relay keeps its own delays.
    const windowMs = 5_000;
    const accepted: number[] = [];
    const throttles: { at: number; retryAfterMs: number }[] = [];
    const requests: number[] = [];
    graph = await startOAuth2Double({ now: Date.now, microsoft: CONTOSO_APP });
    graph.setGraphBehaviour(() => {
      const now = Date.now();
      requests.push(now);
      const recent = accepted.filter((t) => t > now - windowMs);
      if (recent.length < 30) {
        accepted.push(now);
        return { type: 'accept' };
      }
      const retryAfterSeconds = Math.ceil((recent[0] + windowMs - now) / 1000);
      throttles.push({ at: now, retryAfterMs: retryAfterSeconds * 1000 });
      return { type: 'throttle', retryAfterSeconds };
    });
    relay = await startTestRelay(
      {
        MAIL_TRANSPORT: 'graph',
        GRAPH_URL: graph.graphUrl,
        MAIL_FROM: 'Compliance <reports@contoso.example>',
        ...buildContosoAppEnv(graph),
        ...netboxEnv(),
      },
      { dataDir: path.join(dir, 'data') },
    );
    await postReport(relay, netbox, 401, stockOwners(netbox));

    // Finished well within one outage backoff step per throttle: two windows and a little.
    await waitUntil(() => (graph!.graphSends.length >= OWNERS ? true : undefined), 45_000, 'every owner mail');
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'the delivery sent');
    const recipients = graph.graphSends.map((s) => String((s.parsed.to as { text?: string } | undefined)?.text));
    expect(new Set(recipients).size).toBe(OWNERS);
    expect(recipients).toHaveLength(OWNERS);

    expect(throttles.length).toBeGreaterThan(0);
    for (const throttle of throttles) {
      // Nothing was asked of Graph before the time it gave…
      const next = requests.find((t) => t > throttle.at);
      expect(next).toBeGreaterThanOrEqual(throttle.at + throttle.retryAfterMs);
    }
    // …and the relay scheduled its retry for then (plus at most a second of jitter), not on its outage backoff.
    const retries = relay.workerOutcomes.filter((o) => o.settled?.state === 'retrying');
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) {
      if (retry.settled?.state !== 'retrying') continue;
      const { nextAttemptAt } = retry.settled;
      expect(retry.failure?.code).toBe('GRAPH_THROTTLED');
      const throttle = throttles.filter((t) => t.at <= nextAttemptAt).at(-1)!;
      expect(nextAttemptAt).toBeGreaterThanOrEqual(throttle.at + throttle.retryAfterMs);
      expect(nextAttemptAt).toBeLessThan(throttle.at + OUTAGE_FIRST_PAUSE_MS);
    }
    expect(relay.relay.worker.breaker).toMatchObject({ state: 'closed', failures: 0 });
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
  }, 60_000);

  it('an SMTP server answering 450 "try again in N seconds" past 30 mails a window: each owner mail once, each retry when the server said', async () => {
    const windowMs = 5_000;
    const accepted: number[] = [];
    const refusals: { at: number; waitMs: number }[] = [];
    const attempts: number[] = [];
    smtp = await startSmtpPeer();
    smtp.setBehaviour(() => {
      const now = Date.now();
      attempts.push(now);
      const recent = accepted.filter((t) => t > now - windowMs);
      if (recent.length < 30) {
        accepted.push(now);
        return { type: 'accept' };
      }
      const seconds = Math.ceil((recent[0] + windowMs - now) / 1000);
      refusals.push({ at: now, waitMs: seconds * 1000 });
      // Worded like the rate limits of Postfix policy servers (postfwd, policyd): the enhanced code, the limit, the wait.
      return { type: 'reject', code: 450, message: `4.7.1 Rate limit exceeded for relay@example.com, try again in ${seconds} seconds` };
    });
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_FROM: 'Compliance <relay@example.com>', ...netboxEnv() },
      { dataDir: path.join(dir, 'data') },
    );
    await postReport(relay, netbox, 402, stockOwners(netbox));

    const mails = await smtp.waitFor(OWNERS, 45_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'the delivery sent');
    const recipients = mails.map((m) => m.envelope.to.join(','));
    expect(new Set(recipients).size).toBe(OWNERS);
    expect(recipients).toHaveLength(OWNERS);

    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) expect(attempts.find((t) => t > refusal.at)).toBeGreaterThanOrEqual(refusal.at + refusal.waitMs);
    const retries = relay.workerOutcomes.filter((o) => o.settled?.state === 'retrying');
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) {
      if (retry.settled?.state !== 'retrying') continue;
      const { nextAttemptAt } = retry.settled;
      expect(retry.failure).toMatchObject({ code: 'SMTP_4XX', scope: 'server' });
      const refusal = refusals.filter((r) => r.at <= nextAttemptAt).at(-1)!;
      expect(nextAttemptAt).toBeGreaterThanOrEqual(refusal.at + refusal.waitMs);
      expect(nextAttemptAt).toBeLessThan(refusal.at + OUTAGE_FIRST_PAUSE_MS);
    }
    expect(relay.relay.worker.breaker).toMatchObject({ state: 'closed', failures: 0 });
    expect(relay.logs.join('\n')).toContain('the mail server asked to slow down');
  }, 60_000);
});

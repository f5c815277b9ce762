import fs from 'node:fs';
import type { CatchUpOutcome } from '../../src/metrics';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import { SqliteStore } from '../../src/store';
import { textOf } from '../helpers/html';
import { runCliCaptured } from '../helpers/run-cli';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'catch-up-webhook-secret';
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];
/** Where NetBox believes it lives: its lists' `next` links and its reports' `url` point there. */
const NETBOX_HOST = 'http://netbox.internal:8000';

jest.setTimeout(60_000);

/** Report `id` as validity creates it: created one minute after the previous id, `failing` of its 6 results failed. */
function addReport(netbox: NetboxDouble, id: number, failing = 1): void {
  const results = buildResults(6, { firstId: id * 100, fails: (i) => i < failing, tests: TESTS });
  netbox.reports.set(id, { id, created: createdOf(id), results });
}

function createdOf(id: number): string {
  return new Date(Date.UTC(2026, 10, 20, 10, 0, 0) + id * 60_000).toISOString().replace('Z', '123Z');
}

/** NetBox's webhook for a report of the double, signed as NetBox signs it. */
function webhookBody(netbox: NetboxDouble, id: number): Buffer {
  const report = netbox.reports.get(id)!;
  return buildBody({ version: '4.6', data: buildReportData({ id, created: report.created, ...countResults(report.results) }) });
}

const reportIdOf = (mail: ReceivedMail) => mail.parsed.headers.get('x-compliance-report-id') as string | undefined;
const receivedOf = (mail: ReceivedMail) => mail.parsed.headers.get('x-compliance-received') as string | undefined;

describe('catch-up: reports whose webhook never arrived are fetched from NetBox and mailed once, oldest first', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relays: TestRelay[] = [];
  let outcomes: CatchUpOutcome[] = [];

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    // Pages of 2, with absolute `next` links on NetBox's own host: the relay pages as it would through a proxy.
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, maxPageSize: 2, publicOrigin: NETBOX_HOST });
    outcomes = [];
  });
  afterEach(async () => {
    await Promise.allSettled(relays.map((r) => r.stop()));
    relays = [];
    await netbox.close();
    await smtp.close();
  });

  async function start(env: Record<string, string> = {}, dataDir?: string): Promise<TestRelay> {
    const relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: SECRET,
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
        SMTP_POOL_SIZE: '1',
        // Runs at start; the tests run it again when they need to (relay.catchUps.run()), never by waiting.
        CATCH_UP_EVERY: '1h',
        ...env,
      },
      { dataDir },
    );
    relays.push(relay);
    return relay;
  }

  /** The outcome of the catch-up the relay ran at its start. */
  async function startedCatchUp(relay: TestRelay): Promise<CatchUpOutcome[]> {
    return relay.relay.catchUps.run();
  }

  async function runCatchUp(relay: TestRelay): Promise<CatchUpOutcome> {
    const [outcome] = await relay.relay.catchUps.run();
    outcomes.push(outcome);
    return outcome;
  }

  it('a relay stopped while three reports were created mails all three once, in order, each against its predecessor, marked fetched late; the late webhook is a duplicate', async () => {
    addReport(netbox, 10, 1);
    const dataDir = makeTempDir('catch-up-');
    let relay = await start({}, dataDir);
    expect(await startedCatchUp(relay)).toMatchObject([{ result: 'done', queued: 0 }]);
    addReport(netbox, 11, 1);
    const posted = await postWebhook(relay.webhookUrl, webhookBody(netbox, 11), {
      'X-Hook-Signature': netboxSignature(webhookBody(netbox, 11), SECRET),
    });
    expect(posted.status).toBe(202);
    await smtp.waitFor(1);
    await relay.stop();
    relays = [];

    // While the relay is stopped NetBox creates three reports; their webhooks go nowhere.
    addReport(netbox, 12, 2);
    addReport(netbox, 13, 0);
    addReport(netbox, 14, 3);
    relay = await start({}, dataDir);
    const mails = (await smtp.waitFor(4)).slice(1);
    expect(mails.map(reportIdOf)).toEqual(['12', '13', '14']);
    expect(mails.map(receivedOf)).toEqual(['catch-up', 'catch-up', 'catch-up']);
    const texts = mails.map((m) => String(m.parsed.text));
    for (const text of texts) expect(text).toContain('Fetched from NetBox by the relay: its webhook never arrived.');
    expect(texts[0]).toMatch(/Worse than report 11/);
    expect(texts[1]).toMatch(/Better than report 12/);
    expect(texts[2]).toMatch(/Worse than report 13/);
    // The webhook that did arrive is not marked.
    expect(receivedOf(smtp.received[0])).toBeUndefined();
    expect(String(smtp.received[0].parsed.text)).not.toContain('Fetched from NetBox');

    // NetBox's webhook for one of them arrives late after all: already stored, not mailed again.
    const late = webhookBody(netbox, 13);
    const answer = await postWebhook(relay.webhookUrl, late, { 'X-Hook-Signature': netboxSignature(late, SECRET) });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: 'duplicate' });
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 0 });
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.queued === 0 ? true : undefined), 10_000, 'an empty queue');
    expect(smtp.received).toHaveLength(4);

    // The deliveries listing says which came by catch-up.
    const listed = await relay.relay.store.listDeliveries();
    expect(listed.map((d) => [d.reportId, d.receivedVia])).toEqual([
      [14, 'catch-up'],
      [13, 'catch-up'],
      [12, 'catch-up'],
      [11, 'webhook'],
    ]);
    // The list was paged on NetBox's own host, rebased onto NETBOX_URL, with the token.
    expect(netbox.requests.some((r) => r.path.startsWith('/api/plugins/validity/reports/?') && r.path.includes('offset=2'))).toBe(true);
    expect(relay.logs.join('\n')).not.toContain(TOKEN);
  });

  /** The reports list's queries the relay sent since `from`, as parameters. */
  const listQueries = (from = 0) =>
    netbox.requests
      .slice(from)
      .filter((r) => r.path.startsWith('/api/plugins/validity/reports/?'))
      .map((r) => Object.fromEntries(new URL(r.path, 'http://x').searchParams));

  it('validity 3.x is asked only for the reports created after the newest seen, oldest first; the last seen is not mailed again', async () => {
    addReport(netbox, 10);
    const relay = await start();
    expect(await startedCatchUp(relay)).toMatchObject([{ result: 'done', queued: 0 }]);
    for (const id of [11, 12, 13]) addReport(netbox, id);
    const from = netbox.requests.length;
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 3 });
    expect((await smtp.waitFor(3)).map(reportIdOf)).toEqual(['11', '12', '13']);
    // Pages of 2: the second page keeps the filter.
    expect(listQueries(from)).toEqual([
      { created__gt: '2026-11-20T10:10:00.000Z', ordering: 'created' },
      { created__gt: '2026-11-20T10:10:00.000Z', ordering: 'created', offset: '2', limit: '2' },
    ]);
    const next = netbox.requests.length;
    // NetBox keeps microseconds, the relay's cursor milliseconds: report 13 (123 µs past it) is listed again, not queued twice.
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 0 });
    expect(listQueries(next)).toEqual([{ created__gt: '2026-11-20T10:13:00.000Z', ordering: 'created' }]);
    expect(smtp.received).toHaveLength(3);
  });

  it('validity before 3.0 (no filter on its reports list) is paged newest first until the last seen, as before', async () => {
    await netbox.close();
    netbox = await startNetboxDouble({
      authorization: `Token ${TOKEN}`,
      maxPageSize: 2,
      publicOrigin: NETBOX_HOST,
      validityVersion: '2.4.1',
    });
    addReport(netbox, 10);
    const relay = await start();
    expect(await startedCatchUp(relay)).toMatchObject([{ result: 'done', queued: 0 }]);
    for (const id of [11, 12, 13]) addReport(netbox, id);
    const from = netbox.requests.length;
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 3 });
    expect((await smtp.waitFor(3)).map(reportIdOf)).toEqual(['11', '12', '13']);
    expect(listQueries(from)).toEqual([{ ordering: '-created' }, { ordering: '-created', offset: '2', limit: '2' }]);
  });

  it('the dashboard, the admin API and `deliveries` say which report was fetched late', async () => {
    addReport(netbox, 1);
    const adminToken = 'catch-up-admin-token-0123456789';
    const relay = await start({ ADMIN_TOKEN: adminToken });
    await startedCatchUp(relay);
    addReport(netbox, 2);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 1 });
    await smtp.waitFor(1);
    const [delivery] = await relay.relay.store.listDeliveries();
    const api = await fetch(`${relay.url}/api/deliveries/${delivery.id}`, { headers: { Authorization: `Bearer ${adminToken}` } });
    expect(((await api.json()) as { delivery: unknown }).delivery).toMatchObject({
      reportId: 2,
      receivedVia: 'catch-up',
      source: 'catch-up',
    });
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(adminToken).issue(Date.now()).cookie}`;
    const list = textOf(await (await fetch(`${relay.url}/ui`, { headers: { Cookie: cookie } })).text());
    expect(list).toMatch(/Report 2: 5\/6 passed \(83\.3%\) HIGH failing 1\/3 fetched late/);
    const page = textOf(await (await fetch(`${relay.url}/ui/deliveries/${delivery.id}`, { headers: { Cookie: cookie } })).text());
    expect(page).toContain('fetched from NetBox by the catch-up: its webhook never arrived');
    await relay.stop();
    relays = [];
    const cli = await runCliCaptured(['deliveries'], { DATA_DIR: relay.dataDir, MAIL_TO: 'netops@example.com' });
    expect(cli.stdout).toMatch(/\n\d+\s+2 catch-up\s/);
  });

  it('a report received by webhook is not fetched again, even once retention pruned its delivery', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    addReport(netbox, 2);
    const body = webhookBody(netbox, 2);
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    await smtp.waitFor(1);
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'the sent record');
    expect(await relay.relay.store.pruneDeliveries({ state: 'sent', before: Date.now() + 60_000 })).toBe(1);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 0 });
    expect((await relay.relay.store.readQueue()).counts).toMatchObject({ queued: 0, sending: 0 });
    expect(smtp.received).toHaveLength(1);
  });

  it('a report created while the relay runs, whose webhook never comes, is mailed at the next turn of CATCH_UP_EVERY', async () => {
    addReport(netbox, 3);
    const relay = await start({ CATCH_UP_EVERY: '200ms' });
    await waitUntil(() => relay.logs.find((l) => l.includes("catch-up starts at NetBox's newest report 3")), 10_000, 'the start');
    addReport(netbox, 4, 2);
    const [mail] = await smtp.waitFor(1);
    expect(reportIdOf(mail)).toBe('4');
    expect(receivedOf(mail)).toBe('catch-up');
  });

  it('a first start against a NetBox with 50 old reports mails nothing: the newest is the starting point, logged', async () => {
    for (let id = 1; id <= 50; id += 1) addReport(netbox, id);
    const relay = await start();
    expect(await startedCatchUp(relay)).toMatchObject([{ result: 'done', queued: 0 }]);
    expect(relay.logs.some((l) => l.includes("catch-up starts at NetBox's newest report 50: older reports are not mailed"))).toBe(true);
    // Only the first page was read.
    expect(netbox.requests.filter((r) => r.path.startsWith('/api/plugins/validity/reports/'))).toHaveLength(1);
    addReport(netbox, 51);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 1 });
    const [mail] = await smtp.waitFor(1);
    expect(reportIdOf(mail)).toBe('51');
    expect(smtp.received).toHaveLength(1);
  });

  it('30 missed reports: the newest 20 are mailed one by one, the other 10 named in one notice with links', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    for (let id = 2; id <= 31; id += 1) addReport(netbox, id);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 20 });
    const mails = await smtp.waitFor(21, 30_000);
    const reports = mails.filter((m) => reportIdOf(m) !== undefined);
    expect(reports.map(reportIdOf)).toEqual(Array.from({ length: 20 }, (_, i) => String(12 + i)));
    const [notice] = mails.filter((m) => reportIdOf(m) === undefined);
    expect(notice.parsed.subject).toBe('30 compliance reports missed while the relay was not told');
    const text = String(notice.parsed.text);
    expect(text).toContain('20 of them are mailed one by one (the newest)');
    for (let id = 2; id <= 11; id += 1) expect(text).toContain(`- report ${id}, created `);
    expect(text).toContain(`${netbox.url}/plugins/validity/reports/2/`);
    expect(text).not.toContain('- report 12,');
    // Run again: nothing new, no second notice.
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 0 });
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.queued === 0 ? true : undefined), 10_000, 'an empty queue');
    expect(smtp.received).toHaveLength(21);
    const metrics = await relay.relay.metrics.render();
    expect(metrics).toContain('compliance_relay_catch_up_reports_total{source="default"} 20');
    expect(metrics).toMatch(/compliance_relay_catch_up_last_success_age_seconds\{source="default"\} \d/);
  });

  it('a report NetBox deleted before the relay could fetch it is named in the notice, not retried', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    addReport(netbox, 2);
    addReport(netbox, 3);
    addReport(netbox, 4);
    // validity keeps its newest reports only: 2 is gone before the relay asks.
    netbox.reports.delete(2);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 2 });
    const mails = await smtp.waitFor(3);
    expect(mails.filter((m) => reportIdOf(m)).map(reportIdOf)).toEqual(['3', '4']);
    const notice = mails.find((m) => reportIdOf(m) === undefined)!;
    expect(String(notice.parsed.text)).toContain(
      'No longer in NetBox when the relay asked (validity keeps only its newest reports), so not mailed: report 2.',
    );
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 0 });
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.queued === 0 ? true : undefined), 10_000, 'an empty queue');
    expect(smtp.received).toHaveLength(3);
  });

  it('a missed report whose fields a webhook would have been refused for is named in the notice, and the others still mailed', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    addReport(netbox, 2);
    addReport(netbox, 3);
    netbox.reports.get(2)!.fields = { total_passed: 99 };
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 1 });
    const mails = await smtp.waitFor(2);
    expect(mails.filter((m) => reportIdOf(m)).map(reportIdOf)).toEqual(['3']);
    const notice = mails.find((m) => reportIdOf(m) === undefined)!;
    expect(String(notice.parsed.text)).toContain('Refused, so not mailed: report 2');
    expect(relay.logs.some((l) => l.includes('missed report refused') && l.includes('total_passed'))).toBe(true);
  });

  it('never holds up a webhook: one is answered while a catch-up waits for NetBox', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    addReport(netbox, 2);
    let release!: () => void;
    netbox.gates.set('/api/plugins/validity/reports/', new Promise<void>((resolve) => (release = resolve)));
    let caughtUp = false;
    const catchUp = runCatchUp(relay).then((outcome) => {
      caughtUp = true;
      return outcome;
    });
    await waitUntil(() => netbox.held.length > 0 || undefined, 5_000, 'the catch-up to ask NetBox');
    addReport(netbox, 5);
    const body = webhookBody(netbox, 5);
    const answer = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(answer.status).toBe(202);
    await smtp.waitFor(1);
    // The webhook's report was mailed while the catch-up still waited for NetBox.
    expect(caughtUp).toBe(false);
    release();
    expect(await catchUp).toMatchObject({ result: 'done', queued: 1 });
    const mails = await smtp.waitFor(2);
    expect(mails.map(reportIdOf)).toEqual(['5', '2']);
  });

  it('a stop during a catch-up cuts it short and gives its lease back, so the next start catches up at once', async () => {
    addReport(netbox, 1);
    const relay = await start();
    await startedCatchUp(relay);
    addReport(netbox, 2);
    netbox.gates.set('/api/plugins/validity/reports/', new Promise(() => undefined));
    const catchUp = runCatchUp(relay);
    await waitUntil(() => netbox.held.length > 0 || undefined, 5_000, 'the catch-up to ask NetBox');
    await relay.stop();
    relays = [];
    expect(await catchUp).toMatchObject({ result: 'failed' });
    netbox.gates.clear();
    const store = SqliteStore.open({ dataDir: relay.dataDir });
    try {
      expect(await store.takeCatchUpLease({ source: 'default', owner: 'next', now: Date.now(), leaseMs: 1_000 })).toBeDefined();
      await store.finishCatchUp({ source: 'default', owner: 'next', now: Date.now() });
    } finally {
      await store.close();
    }
    const again = await start({}, relay.dataDir);
    expect(await startedCatchUp(again)).toMatchObject([{ result: 'done', queued: 1 }]);
  });

  it('check-config says whether the catch-up runs, and why not', async () => {
    const base = { MAIL_TO: 'netops@example.com', DATA_DIR: makeTempDir('catch-up-config-') };
    const on = await runCliCaptured(['check-config'], { ...base, NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN });
    expect(on.stdout).toContain('Catch-up of missed reports: every 5m, at most 20 missed reports mailed per run');
    const off = await runCliCaptured(['check-config'], { ...base, NETBOX_URL: netbox.url });
    expect(off.stdout).toContain('Catch-up of missed reports: off: NETBOX_TOKEN is not set: NetBox lists reports only to a token');
  });

  it('NetBox down during a catch-up: logged with the reason, counted, readiness unaffected, and the report mailed at the next turn', async () => {
    addReport(netbox, 1);
    const relay = await start({ METRICS_TOKEN: 'metrics-token-1234' });
    await startedCatchUp(relay);
    addReport(netbox, 2);
    netbox.failNext.push(503, 503, 503, 503, 503, 503);
    expect(await runCatchUp(relay)).toMatchObject({ result: 'failed', code: 'SERVER' });
    expect(relay.logs.some((l) => l.includes('catch-up of missed reports failed') && l.includes('HTTP 503'))).toBe(true);
    expect(await relay.relay.metrics.render()).toContain('compliance_relay_catch_up_failures_total{source="default",code="SERVER"} 1');
    const ready = await fetch(`${relay.url}/readyz`, { headers: { Authorization: 'Bearer metrics-token-1234' } });
    expect(ready.status).toBe(200);
    expect(smtp.received).toHaveLength(0);

    netbox.failNext.length = 0;
    expect(await runCatchUp(relay)).toMatchObject({ result: 'done', queued: 1 });
    const [mail] = await smtp.waitFor(1);
    expect(reportIdOf(mail)).toBe('2');
  });

  it('a token NetBox refuses: the failure says so, with the token masked', async () => {
    addReport(netbox, 1);
    const relay = await start({ NETBOX_TOKEN: 'fedcba9876543210fedcba9876543210fedcba98' });
    expect(await startedCatchUp(relay)).toMatchObject([{ result: 'failed', code: 'AUTH' }]);
    expect(relay.logs.join('\n')).not.toContain('fedcba9876543210fedcba9876543210fedcba98');
  });
});

describe('catch-up of a NetBox under a base path', () => {
  it('pages and fetches under the base path, and the mail links the report as the webhook would', async () => {
    const smtp = await startSmtpPeer();
    const netbox = await startNetboxDouble({
      authorization: `Token ${TOKEN}`,
      maxPageSize: 2,
      publicOrigin: NETBOX_HOST,
      basePath: '/netbox',
    });
    const relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      NETBOX_URL: netbox.url,
      NETBOX_TOKEN: TOKEN,
      CATCH_UP_EVERY: '1h',
    });
    try {
      for (let id = 1; id <= 3; id += 1) addReport(netbox, id);
      await relay.relay.catchUps.run();
      addReport(netbox, 4);
      expect(await relay.relay.catchUps.run()).toMatchObject([{ result: 'done', queued: 1 }]);
      const [mail] = await smtp.waitFor(1);
      expect(String(mail.parsed.text)).toContain(`${netbox.url}/plugins/validity/reports/4/`);
      const [delivery] = await relay.relay.store.listDeliveries();
      expect(delivery.report).toMatchObject({
        url: '/netbox/api/plugins/validity/reports/4/',
        results_url: '/netbox/api/plugins/validity/test-results/?report_id=4',
      });
    } finally {
      await relay.stop();
      await netbox.close();
      await smtp.close();
    }
  });
});

describe('catch-up per NetBox source', () => {
  it('each source is caught up in its own NetBox, with its own settings, keys and starting point', async () => {
    const smtp = await startSmtpPeer();
    const lab = await startNetboxDouble({ authorization: `Bearer nbt_lab.token`, maxPageSize: 2, publicOrigin: NETBOX_HOST });
    const prod = await startNetboxDouble({ authorization: `Token ${TOKEN}`, maxPageSize: 2, publicOrigin: NETBOX_HOST });
    const dir = makeTempDir('catch-up-sources-');
    fs.writeFileSync(
      `${dir}/sources.yaml`,
      [
        'sources:',
        '  - name: lab',
        `    netbox_url: ${lab.url}`,
        '    token_env: LAB_TOKEN',
        '    webhook_secret_env: LAB_SECRET',
        '    catch_up_every: 1h',
        '  - name: prod',
        `    netbox_url: ${prod.url}`,
        '    token_env: PROD_TOKEN',
        '    webhook_secret_env: PROD_SECRET',
        '    catch_up_every: off',
        '',
      ].join('\n'),
    );
    const relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: SECRET,
        SOURCES_FILE: `${dir}/sources.yaml`,
        CATCH_UP_EVERY: '1h',
        LAB_TOKEN: 'nbt_lab.token',
        LAB_SECRET: 'lab-webhook-secret',
        PROD_TOKEN: TOKEN,
        PROD_SECRET: 'prod-webhook-secret',
      },
      // One missed report of lab mailed one by one, so that the next is named in the notice.
      {
        tune: (config) => ({
          ...config,
          sources: config.sources.map((s) => (s.name === 'lab' ? { ...s, catchUp: { ...s.catchUp, max: 1 } } : s)),
        }),
      },
    );
    try {
      addReport(lab, 29);
      addReport(prod, 29);
      expect(relay.relay.catchUps.sources).toEqual(['lab']);
      expect(relay.logs.some((l) => l.includes('catch-up of missed reports: off: catch_up_every of prod in SOURCES_FILE is off'))).toBe(
        true,
      );
      expect(relay.logs.some((l) => l.includes('catch-up of missed reports: off: NETBOX_URL is not set'))).toBe(true);
      await relay.relay.catchUps.run();
      addReport(lab, 30);
      addReport(lab, 31);
      expect(await relay.relay.catchUps.run()).toMatchObject([{ source: 'lab', result: 'done', queued: 1 }]);
      const mails = await smtp.waitFor(2);
      const report = mails.find((m) => reportIdOf(m) === '31')!;
      expect(report.parsed.headers.get('x-compliance-source')).toBe('lab');
      expect(receivedOf(report)).toBe('catch-up');
      const notice = mails.find((m) => reportIdOf(m) === undefined)!;
      expect(notice.parsed.subject).toBe('lab: 2 compliance reports missed while the relay was not told');
      expect(String(notice.parsed.text)).toContain(`- report 30, created `);
      const [delivery] = (await relay.relay.store.listDeliveries({ netboxSource: 'lab' })).filter((d) => d.kind === 'report');
      expect(delivery.dedupKey).toBe(`lab/31@${createdOf(31)}`);
      expect(prod.requests.filter((r) => r.path.includes('/reports/'))).toEqual([]);
    } finally {
      await relay.stop();
      await lab.close();
      await prod.close();
      await smtp.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('catch-up with two relays on one PostgreSQL database', () => {
  let schema: TestSchema;
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  const relays: TestRelay[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    schema = await createTestSchema('catch_up');
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, maxPageSize: 2, publicOrigin: NETBOX_HOST });
  });
  afterAll(async () => {
    await Promise.allSettled(relays.map((r) => r.stop()));
    await netbox.close();
    await smtp.close();
    await schema.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('each missed report is mailed once, whichever relay catches up', async () => {
    addReport(netbox, 1);
    for (let i = 0; i < 2; i += 1) {
      const dir = makeTempDir('catch-up-pg-');
      dirs.push(dir);
      relays.push(
        await startTestRelay(
          {
            DATABASE_URL: schema.url,
            SMTP_URL: smtp.url,
            MAIL_TO: 'netops@example.com',
            WEBHOOK_SECRET: SECRET,
            NETBOX_URL: netbox.url,
            NETBOX_TOKEN: TOKEN,
            CATCH_UP_EVERY: '1h',
          },
          { dataDir: dir },
        ),
      );
    }
    await Promise.all(relays.map((r) => r.relay.catchUps.run()));
    for (let id = 2; id <= 6; id += 1) addReport(netbox, id, id % 3);
    // Both relays at once, three rounds: one holds the lease at a time, the dedup key has the last word.
    const runs: CatchUpOutcome[] = [];
    for (let round = 0; round < 3; round += 1) runs.push(...(await Promise.all(relays.map((r) => r.relay.catchUps.run()))).flat());
    const queued = runs.reduce((n, o) => n + (o.result === 'done' ? o.queued : 0), 0);
    expect(queued).toBe(5);
    expect(runs.some((o) => o.result === 'failed')).toBe(false);
    const mails = await smtp.waitFor(5);
    await waitUntil(
      async () => ((await relays[0].relay.store.readQueue()).counts.sent === 5 ? true : undefined),
      20_000,
      'five sent deliveries',
    );
    expect(mails.map(reportIdOf).sort()).toEqual(['2', '3', '4', '5', '6']);
    expect(smtp.received).toHaveLength(5);
  });
});

describe('the watchdog with catch-up on says what NetBox itself shows', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  let now: number;

  beforeEach(async () => {
    now = Date.parse('2026-11-20T08:00:00Z');
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, maxPageSize: 2, publicOrigin: NETBOX_HOST });
    addReport(netbox, 1);
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        MAIL_TIMEZONE: 'UTC',
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
        EXPECT_REPORT_EVERY: '24h',
        CATCH_UP_EVERY: '1h',
      },
      { clock: { now: () => now } },
    );
    await relay.relay.catchUps.run();
  });
  afterEach(async () => {
    await relay?.stop();
    await netbox.close();
    await smtp.close();
  });

  it('"no report" after NetBox was asked means NetBox has none, not a lost webhook', async () => {
    now += 25 * 3_600_000;
    expect(await relay!.relay.catchUps.run()).toMatchObject([{ result: 'done', queued: 0 }]);
    expect(await relay!.relay.watchdog!.evaluate()).toBe('overdue');
    const [mail] = await smtp.waitFor(1);
    const text = String(mail.parsed.text);
    expect(text).toContain(
      'NetBox had no newer report either when the relay last listed its reports, at 2026-11-21 09:00:00 UTC (catch-up): no webhook was lost',
    );
    expect(text).not.toContain('silence can mean a lost report');
  });

  it('when the catch-up could not ask NetBox since the silence began, the mail says it cannot tell', async () => {
    now += 25 * 3_600_000;
    netbox.failNext.push(403, 403, 403);
    expect(await relay!.relay.catchUps.run()).toMatchObject([{ result: 'failed', code: 'AUTH' }]);
    expect(await relay!.relay.watchdog!.evaluate()).toBe('overdue');
    const [mail] = await smtp.waitFor(1);
    expect(String(mail.parsed.text)).toContain(
      "The relay has not listed NetBox's reports since 2026-11-20 08:00:00 UTC (its catch-up fails",
    );
  });

  it('"arriving again" says reports whose webhook was lost meanwhile are fetched, not that they are gone', async () => {
    now += 25 * 3_600_000;
    expect(await relay!.relay.watchdog!.evaluate()).toBe('overdue');
    await smtp.waitFor(1);
    addReport(netbox, 2);
    now += 3_600_000;
    expect(await relay!.relay.catchUps.run()).toMatchObject([{ result: 'done', queued: 1 }]);
    expect(await relay!.relay.watchdog!.evaluate()).toBe('resumed');
    const resumed = (await smtp.waitFor(3)).find((m) => m.parsed.headers.get('x-compliance-watchdog') === 'resumed')!;
    const text = String(resumed.parsed.text);
    expect(text).toContain('whose webhook never came are fetched from NetBox by the catch-up');
    expect(text).not.toContain('are not recovered');
  });
});

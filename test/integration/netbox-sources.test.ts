import fs from 'node:fs';
import path from 'node:path';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import { textOf } from '../helpers/html';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { sampleValue, scrape } from '../helpers/prometheus';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const PROD_TOKEN = '0123456789abcdef0123456789abcdef01234567';
const LAB_TOKEN = 'nbt_labkey0123.labtokensecret456789';
const PROD_SECRET = 'prod-webhook-s3cret';
const LAB_SECRET = 'lab-webhook-s3cret';
const ADMIN_TOKEN = 'admin-token-for-the-sources-test';
const CREATED = '2026-03-06T15:11:18.123456Z';
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];

/** The header of a parsed mail as text (mailparser keeps custom headers as strings). */
function header(mail: ReceivedMail, name: string): string {
  return String(mail.parsed.headers.get(name.toLowerCase()) ?? '');
}

describe('several NetBox sources in one relay', () => {
  let smtp: SmtpPeer;
  let prod: NetboxDouble;
  let lab: NetboxDouble;
  let relay: TestRelay;
  let dir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    prod = await startNetboxDouble({ authorization: `Token ${PROD_TOKEN}` });
    lab = await startNetboxDouble({ authorization: `Bearer ${LAB_TOKEN}` });
    dir = makeTempDir('sources-');
    fs.writeFileSync(path.join(dir, 'prod-token'), `${PROD_TOKEN}\n`);
    fs.writeFileSync(
      path.join(dir, 'sources.yaml'),
      [
        'sources:',
        '  - name: prod',
        `    netbox_url: ${prod.url}`,
        `    token_file: ${path.join(dir, 'prod-token')}`,
        '    webhook_secret_env: PROD_SECRET',
        '    tags: { env: prod }',
        '  - name: lab',
        `    netbox_url: ${lab.url}`,
        '    token_env: LAB_TOKEN',
        '    webhook_secret_env: LAB_SECRET',
        '    tags: { env: lab }',
        '',
      ].join('\n'),
    );
    env = {
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      MAIL_FROM: 'Compliance <relay@example.com>',
      WEBHOOK_SECRET: 'default-webhook-secret',
      SOURCES_FILE: path.join(dir, 'sources.yaml'),
      PROD_SECRET,
      LAB_SECRET,
      LAB_TOKEN,
      ADMIN_TOKEN,
    };
    relay = await startTestRelay(env);
  });
  afterEach(async () => {
    await relay.stop();
    await prod.close();
    await lab.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** One NetBox posts report `id` to its own path, signed with its own secret; its double serves the results. */
  async function post(double: NetboxDouble, source: string, secret: string, id: number, fails: (i: number) => boolean, created = CREATED) {
    const results = buildResults(12, { fails, tests: TESTS });
    double.reports.set(id, { id, created, results });
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
    return postWebhook(`${relay.url}/webhook/${source}`, body, { 'X-Hook-Signature': netboxSignature(body, secret) });
  }

  it('report 29 from two NetBoxes: two mails, two threads, each naming and enriched by its own NetBox with its own token', async () => {
    const fromProd = await post(prod, 'prod', PROD_SECRET, 29, (i) => i % 3 === 0);
    const fromLab = await post(lab, 'lab', LAB_SECRET, 29, (i) => i % 2 === 0);
    expect([fromProd.status, fromLab.status]).toEqual([202, 202]);
    expect(fromLab.json.id).not.toBe(fromProd.json.id);

    const mails = await smtp.waitFor(2);
    const bySource = new Map(mails.map((m) => [header(m, 'X-Compliance-Source'), m]));
    const prodMail = bySource.get('prod')!;
    const labMail = bySource.get('lab')!;
    expect([...bySource.keys()].sort()).toEqual(['lab', 'prod']);

    expect(prodMail.parsed.subject).toMatch(/^First: 66\.7%, 2 HIGH failing \u2014 report 29 \u00b7 prod$/);
    expect(labMail.parsed.subject).toMatch(/^First: 50\.0%, 6 HIGH failing \u2014 report 29 \u00b7 lab$/);
    expect(String(prodMail.parsed.text)).toContain('From the NetBox source prod');
    expect(String(labMail.parsed.text)).toContain('From the NetBox source lab');
    expect(String(labMail.parsed.html)).toContain('From the NetBox source lab');
    // Each mail lists its own NetBox's failures, with links into that NetBox.
    expect(String(prodMail.parsed.text)).toContain('WHAT FAILED: 4 failing results in 2 tests');
    expect(String(labMail.parsed.text)).toContain('WHAT FAILED: 6 failing results in 1 test');
    expect(String(prodMail.parsed.text)).toContain(`${prod.url}/plugins/validity/test-results/1000/`);
    expect(String(labMail.parsed.text)).toContain(`${lab.url}/plugins/validity/test-results/1000/`);
    expect(String(labMail.parsed.text)).not.toContain(prod.url);

    // Two threads: one per source and route.
    expect(header(prodMail, 'References')).toBe('<compliance-thread.default.prod@example.com>');
    expect(header(labMail, 'References')).toBe('<compliance-thread.default.lab@example.com>');

    // Each NetBox was asked with its own token, and only ever its own.
    expect(prod.requests.length).toBeGreaterThan(0);
    expect(lab.requests.length).toBeGreaterThan(0);
    expect(prod.requests.every((r) => r.authorization === `Token ${PROD_TOKEN}`)).toBe(true);
    expect(lab.requests.every((r) => r.authorization === `Bearer ${LAB_TOKEN}`)).toBe(true);
    expect(relay.logs.join('\n')).not.toContain(LAB_TOKEN);
    expect(relay.logs.join('\n')).not.toContain(PROD_TOKEN);

    // The admin API names each delivery's source and lists one source alone.
    const listed = (await (
      await fetch(`${relay.url}/api/deliveries?source=lab`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as { deliveries: { id: number; netboxSource: string; dedupKey: string }[] };
    expect(listed.deliveries).toEqual([
      expect.objectContaining({ id: fromLab.json.id, netboxSource: 'lab', dedupKey: `lab/29@${CREATED}` }),
    ]);

    // The dashboard names each delivery's source, lists one source alone, and links a report into its own NetBox.
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(Date.now()).cookie}`;
    const page = async (p: string) => (await fetch(`${relay.url}${p}`, { headers: { Cookie: cookie } })).text();
    const all = await page('/ui');
    expect(all).toContain(`data-source="prod"`);
    expect(all).toContain(`data-source="lab"`);
    const labOnly = await page('/ui?source=lab');
    expect(labOnly).toContain(`data-delivery="${fromLab.json.id}"`);
    expect(labOnly).not.toContain(`data-delivery="${fromProd.json.id}"`);
    const labPage = await page(`/ui/deliveries/${fromLab.json.id}`);
    expect(labPage).toContain(`href="${lab.url}/plugins/validity/reports/29/"`);
    expect(labPage).toContain('<dt>NetBox source</dt><dd>lab</dd>');
  });

  it('two histories: a report is compared with the previous one of its own source', async () => {
    expect((await post(prod, 'prod', PROD_SECRET, 29, (i) => i % 3 === 0)).status).toBe(202);
    await smtp.waitFor(1);
    // Lab's report 31 is created between prod's 29 and 30: with one history, prod's 30 would be compared with it.
    expect((await post(lab, 'lab', LAB_SECRET, 31, () => false, '2026-03-06T16:00:00.000000Z')).status).toBe(202);
    await smtp.waitFor(2);
    expect((await post(prod, 'prod', PROD_SECRET, 30, (i) => i % 2 === 0, '2026-03-06T17:00:00.000000Z')).status).toBe(202);
    const mails = await smtp.waitFor(3);
    const [first, labFirst, second] = mails.map((m) => m.parsed.subject ?? '');
    expect(first).toMatch(/^First: /);
    expect(labFirst).toBe('First: 100.0%, all passed \u2014 report 31 \u00b7 lab');
    // HIGH went from 2 failing to 6 while every MIDDLE result was fixed: mixed, never better.
    expect(second).toMatch(/^Mixed: 50\.0% \(\u221216\.7\), 6 HIGH failing \u2014 report 30 \u00b7 prod$/);
  });

  it("the dashboard's chart follows the list's filters: one chart per source, never two NetBoxes on one line", async () => {
    // Both NetBoxes have a report 29; their reports interleave in time.
    const posted = [
      await post(prod, 'prod', PROD_SECRET, 29, (i) => i % 3 === 0, '2026-03-06T15:00:00.000000Z'),
      await post(lab, 'lab', LAB_SECRET, 29, (i) => i % 2 === 0, '2026-03-06T15:30:00.000000Z'),
      await post(prod, 'prod', PROD_SECRET, 30, () => false, '2026-03-06T16:00:00.000000Z'),
      await post(lab, 'lab', LAB_SECRET, 31, () => false, '2026-03-06T16:30:00.000000Z'),
    ];
    expect(posted.map((p) => p.status)).toEqual([202, 202, 202, 202]);
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(Date.now()).cookie}`;
    const page = async (p: string) => (await fetch(`${relay.url}${p}`, { headers: { Cookie: cookie } })).text();
    /** Each wide chart of a page by its source: the reports its "All" line joins, left to right. */
    const chartsOf = (html: string) =>
      Object.fromEntries(
        [...html.matchAll(/<svg [^>]*class="pass-chart"(?: data-chart-source="([^"]*)")?[^>]*>([\s\S]*?)<\/svg>/g)].map((m) => {
          const line = /<g class="series" data-series="All">([\s\S]*?)<\/g>/.exec(m[2])![1];
          return [m[1] ?? '(no source)', [...line.matchAll(/All in report (\d+) \(/g)].map((r) => Number(r[1]))];
        }),
      );

    const all = await page('/ui');
    expect(chartsOf(all)).toEqual({ lab: [29, 31], prod: [29, 30] });
    expect(textOf(all)).toContain('Pass percentage per severity, NetBox source lab (last 2 reports)');
    expect(textOf(all)).toContain('Pass percentage per severity, NetBox source prod (last 2 reports)');
    const labOnly = await page('/ui?source=lab');
    expect(chartsOf(labOnly)).toEqual({ lab: [29, 31] });
    expect(labOnly).not.toContain('data-chart-source="prod"');
    // Every filter of the list applies: report 29 is one point in each NetBox's chart.
    expect(chartsOf(await page('/ui?report=29'))).toEqual({ lab: [29], prod: [29] });
    const none = await page('/ui?source=lab&report=30');
    expect(chartsOf(none)).toEqual({ '(no source)': [] });
    expect(textOf(none)).toContain('No report matches these filters');
  });

  it("one source's wrong signature is refused on its path alone; the other source goes on", async () => {
    const forged = await post(lab, 'lab', PROD_SECRET, 29, () => true);
    expect(forged.status).toBe(401);
    expect(forged.json.error.code).toBe('SIGNATURE_INVALID');
    const fine = await post(prod, 'prod', PROD_SECRET, 29, (i) => i % 3 === 0);
    expect(fine.status).toBe(202);
    const [mail] = await smtp.waitFor(1);
    expect(header(mail, 'X-Compliance-Source')).toBe('prod');
    // The default source's bare path is untouched by either: its own secret, its own answer.
    const body = buildBody({ version: '4.6', data: buildReportData({ id: 7 }) });
    expect((await postWebhook(`${relay.url}/webhook`, body, { 'X-Hook-Signature': netboxSignature(body, LAB_SECRET) })).status).toBe(401);

    const text = await scrape(relay.url);
    expect(
      sampleValue(text, 'compliance_relay_deliveries_received_total', { source: 'lab', outcome: 'rejected', code: 'SIGNATURE_INVALID' }),
    ).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { source: 'prod', outcome: 'queued' })).toBe(1);
    expect(
      sampleValue(text, 'compliance_relay_deliveries_received_total', {
        source: 'default',
        outcome: 'rejected',
        code: 'SIGNATURE_INVALID',
      }),
    ).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { source: 'lab', outcome: 'queued' })).toBe(0);
  });

  it("a silent NetBox holds only its own source's mails: prod's reports go while lab's wait for their NetBox, in order", async () => {
    let answer = () => undefined as void;
    lab.gates.set('/api/plugins/validity/test-results/', new Promise<void>((resolve) => (answer = resolve)));
    try {
      expect((await post(lab, 'lab', LAB_SECRET, 31, (i) => i % 2 === 0)).status).toBe(202);
      // Lab's report is being composed: its NetBox has the request and says nothing (its budget is 30 s).
      await waitUntil(() => (lab.held.length > 0 ? true : undefined), 10_000, "lab's NetBox asked");
      expect((await post(lab, 'lab', LAB_SECRET, 32, (i) => i % 2 === 0, '2026-03-06T16:00:00.000000Z')).status).toBe(202);
      expect((await post(prod, 'prod', PROD_SECRET, 41, (i) => i % 3 === 0)).status).toBe(202);
      expect((await post(prod, 'prod', PROD_SECRET, 42, (i) => i % 3 === 0, '2026-03-06T16:00:00.000000Z')).status).toBe(202);
      const prodMails = await smtp.waitFor(2, 20_000);
      expect(prodMails.map((m) => [header(m, 'X-Compliance-Source'), header(m, 'X-Compliance-Report-Id')])).toEqual([
        ['prod', '41'],
        ['prod', '42'],
      ]);
      // Enriched by their own NetBox, while lab's is still silent.
      expect(String(prodMails[0].parsed.text)).toContain('WHAT FAILED: 4 failing results in 2 tests');
      expect(lab.held).toHaveLength(1);
    } finally {
      answer();
    }
    const mails = await smtp.waitFor(4, 20_000);
    expect(mails.slice(2).map((m) => [header(m, 'X-Compliance-Source'), header(m, 'X-Compliance-Report-Id')])).toEqual([
      ['lab', '31'],
      ['lab', '32'],
    ]);
    expect(String(mails[2].parsed.text)).toContain('WHAT FAILED: 6 failing results in 1 test');
  });

  it("a silent NetBox's backlog never takes every send slot: prod's report goes while two of lab's wait", async () => {
    await relay.stop();
    relay = await startTestRelay({ ...env, SMTP_POOL_SIZE: '2' });
    const path = '/api/plugins/validity/test-results/';
    const answers: (() => void)[] = [];
    const gate = () => lab.gates.set(path, new Promise<void>((resolve) => answers.push(resolve)));
    gate();
    try {
      expect((await post(lab, 'lab', LAB_SECRET, 31, (i) => i % 2 === 0)).status).toBe(202);
      await waitUntil(() => (lab.held.length > 0 ? true : undefined), 10_000, "lab's NetBox asked about 31");
      // While 31 is composed, two more of lab's wait: its batch takes them together once 31 is settled.
      expect((await post(lab, 'lab', LAB_SECRET, 32, (i) => i % 2 === 0, '2026-03-06T16:00:00.000000Z')).status).toBe(202);
      expect((await post(lab, 'lab', LAB_SECRET, 33, (i) => i % 2 === 0, '2026-03-06T17:00:00.000000Z')).status).toBe(202);
      // Lab's NetBox answers about 31 and falls silent again.
      const first = answers[0];
      gate();
      first();
      expect((await smtp.waitFor(1, 20_000)).map((m) => header(m, 'X-Compliance-Report-Id'))).toEqual(['31']);
      await waitUntil(() => (lab.held.length > 1 ? true : undefined), 10_000, "lab's NetBox asked about 32");
      // Both slots would be lab's; one stays free, and prod's report takes it.
      expect((await post(prod, 'prod', PROD_SECRET, 41, (i) => i % 3 === 0)).status).toBe(202);
      const mails = await smtp.waitFor(2, 20_000);
      expect(mails.map((m) => [header(m, 'X-Compliance-Source'), header(m, 'X-Compliance-Report-Id')])).toEqual([
        ['lab', '31'],
        ['prod', '41'],
      ]);
      expect(lab.held).toHaveLength(2);
    } finally {
      for (const answer of answers) answer();
    }
    const mails = await smtp.waitFor(4, 30_000);
    expect(mails.slice(2).map((m) => [header(m, 'X-Compliance-Source'), header(m, 'X-Compliance-Report-Id')])).toEqual([
      ['lab', '32'],
      ['lab', '33'],
    ]);
  });
});

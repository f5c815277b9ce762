import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { createReportComposer, createReportInsights } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { buildDefaultRoute, DEFAULT_ROUTE_NAME, parseRoutesFile } from '../../src/routing';
import { SqliteStore, type DeliveryRecord, type OwnerGroupPlan } from '../../src/store';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { reportHistoryOf, saveReport } from '../helpers/store-writes';

const T0 = Date.parse('2026-03-06T15:12:00Z');
const composer = createReportComposer({
  renderer: loadRenderer(defaultTemplatesDir()),
  clock: { now: () => T0 },
  mail: { from: 'Compliance <relay@example.com>', timezone: 'Europe/Berlin' },
  routes: [buildDefaultRoute({ to: ['netops@example.com'], cc: [], bcc: [] })],
  implicitRoute: true,
  netboxUrl: 'https://netbox.example.com',
});

/** The default route's mail for a claimed delivery, without what differs per call (nothing should). */
async function mailOf(delivery: DeliveryRecord) {
  const message = (await composer.render(await composer.compose(delivery), {
    route: DEFAULT_ROUTE_NAME,
    reminder: false,
    reason: 'test',
  }))!;
  const headers = Object.fromEntries(
    [...(await simpleParser(message.raw)).headers].filter(([name]) => name.startsWith('x-compliance-')).map(([n, v]) => [n, String(v)]),
  );
  return { subject: message.subject, text: message.text, html: message.html, messageId: message.messageId, headers };
}

/** Stores `body` as the webhook stores a report (its parsed fields beside the bytes) and claims it as the worker does. */
async function storeAndClaim(store: SqliteStore, body: Buffer): Promise<DeliveryRecord> {
  const parsed = parseDelivery(body);
  if (parsed.kind !== 'report') throw new Error('not a report');
  await store.insertDelivery({
    ...parsed,
    sender: '127.0.0.1',
    body,
    receivedAt: T0,
  });
  const [claimed] = await store.claimDue({ now: T0, limit: 1, owner: 'test', leaseMs: 60_000 });
  return claimed;
}

/**
 * Issue 15, "parse once": the composer reads the report the webhook parsed and the store kept; the
 * stored bytes are parsed only for a delivery stored before the typed fields existed.
 */
describe('the report composer reads the stored typed report', () => {
  let dataDir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dataDir = makeTempDir('composer-');
    store = SqliteStore.open({ dataDir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const bodies = {
    'the 4.6 example': fs.readFileSync(path.join(__dirname, '../../examples/delivery-netbox-4.6.json')),
    'a report with custom fields under a base path': buildBody({
      version: '4.4',
      username: 'ops-bot',
      data: buildReportData({
        id: 77,
        basePath: '/netbox',
        high_passed: 1,
        high_count: 4,
        total_passed: 6,
        total_count: 12,
        middle_passed: 5,
        middle_count: 8,
        custom_fields: { team: 'core' },
      }),
    }),
  };

  it.each(Object.entries(bodies))('%s: the same mail from the stored fields as from the body', async (_name, body) => {
    const claimed = await storeAndClaim(store, body);
    expect(claimed.report).not.toBeNull();

    const fromBody = await mailOf({ ...claimed, report: null });
    // Bytes that no longer parse do not matter once the typed report is there: nothing parses them.
    expect(await mailOf({ ...claimed, body: Buffer.from('not json') })).toEqual(fromBody);
    expect(await mailOf(claimed)).toEqual(fromBody);
  });

  it('a delivery stored before the typed fields is composed from its body, and refused when that is not a report', async () => {
    const body = buildBody({ data: buildReportData({ id: 5 }) });
    await store.insertDelivery({
      dedupKey: '5@old',
      reportId: 5,
      reportCreated: '2023-04-12T19:36:33.690567Z',
      completedAt: '2023-04-12T19:36:37.739Z',
      sender: '127.0.0.1',
      body,
      receivedAt: T0,
    });
    const [claimed] = await store.claimDue({ now: T0, limit: 1, owner: 'test', leaseMs: 60_000 });
    expect(claimed.report).toBeNull();
    expect((await mailOf(claimed)).subject).toContain('62.5% passed, 3 failing, no HIGH \u2014 report 5');
    await expect(composer.compose({ ...claimed, body: buildBody({ event: 'deleted' }) })).rejects.toMatchObject({ code: 'EUNREADABLE' });
  });
});

/** The trend chart is part of the HTML (a table): nothing to draw or attach, nothing that can fail apart from the mail. */
describe('the report composer and the trend chart', () => {
  let dataDir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dataDir = makeTempDir('composer-chart-');
    store = SqliteStore.open({ dataDir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function mailOfSecondReport(options: { earlier: boolean } = { earlier: true }) {
    const composeWithChart = createReportComposer({
      renderer: loadRenderer(defaultTemplatesDir()),
      clock: { now: () => T0 },
      mail: { from: 'Compliance <relay@example.com>', timezone: 'Europe/Berlin' },
      routes: [buildDefaultRoute({ to: ['netops@example.com'], cc: [], bcc: [] })],
      implicitRoute: true,
      maxFailures: 3,
      insights: createReportInsights({
        budgetMs: 1000,
        history: reportHistoryOf(store),
      }),
    });
    // A report before it: one point is not a trend, and the first report of a series has no chart.
    const created = '2023-04-11T19:36:33Z';
    const counts = {
      overall: { passed: 4, count: 8 },
      HIGH: { passed: 0, count: 0 },
      MIDDLE: { passed: 4, count: 8 },
      LOW: { passed: 0, count: 0 },
    };
    if (options.earlier) {
      await saveReport(store, {
        dedupKey: `8@${created}`,
        series: 'netbox|',
        reportId: 8,
        created,
        createdMs: Date.parse(created),
        counts,
        failing: null,
      });
    }
    const body = buildBody({ data: buildReportData({ id: 9 }) });
    const claimed = await storeAndClaim(store, body);
    return composeWithChart.render(await composeWithChart.compose(claimed), { route: DEFAULT_ROUTE_NAME, reminder: false, reason: 'test' });
  }

  it('shows the chart in the HTML, without an attachment, and its sparkline in the text', async () => {
    const message = await mailOfSecondReport();
    expect((await simpleParser(message!.raw)).attachments).toEqual([]);
    expect(message!.html).toContain('Pass ratio, last 2 reports');
    expect(message!.html).toMatch(/<table class="chart" title="Pass ratio per severity over the last 2 reports \(8 to 9\)/);
    expect(message!.text).toMatch(/Pass ratio, last 2 reports \(overall, oldest first, [^)]+\): \S\S now /);
  });

  it('leaves the chart out of the first report of a series: one point is not a trend', async () => {
    const message = await mailOfSecondReport({ earlier: false });
    expect((await simpleParser(message!.raw)).attachments).toEqual([]);
    expect(message!.html).not.toContain('Pass ratio, last');
    expect(message!.html).not.toContain('class="chart"');
  });
});

/** A report fetched by the catch-up says so in every mail of it: an owner group's share as much as the whole report. */
describe('the report composer and a caught-up report', () => {
  let dataDir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dataDir = makeTempDir('composer-catch-up-');
    store = SqliteStore.open({ dataDir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("an owner group's mail says it was caught up, like the whole report's", async () => {
    const routes = parseRoutesFile(
      'routes:\n  - name: owners\n    to:\n      netbox_contacts: { role: owner }\n      fallback: noc@example.com\n      allowed_domains: [example.com]\n',
      'routes.yaml',
    );
    const owners = createReportComposer({
      renderer: loadRenderer(defaultTemplatesDir()),
      clock: { now: () => T0 },
      mail: { from: 'Compliance <relay@example.com>', timezone: 'Europe/Berlin' },
      routes,
    });
    const claimed = await storeAndClaim(store, buildBody({ data: buildReportData({ id: 12 }) }));
    const composed = await owners.compose({ ...claimed, receivedVia: 'catch-up' });
    const group: OwnerGroupPlan = {
      ...{ route: 'owners', key: 'site-fra1', to: ['alice@example.com'], why: 'you own site fra1' },
      ...{ deviceIds: [101], devices: ['sw-fra-1'], counts: null, whole: false, note: null },
    };
    for (const context of [{ route: 'owners' }, { route: 'owners', ownerGroup: group }]) {
      const message = (await owners.render(composed, { ...context, reminder: false, reason: 'test' }))!;
      expect((await simpleParser(message.raw)).headers.get('x-compliance-received')).toBe('catch-up');
      expect(message.text).toContain('Fetched from NetBox by the relay: its webhook never arrived.');
    }
  });
});

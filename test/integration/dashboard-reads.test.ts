import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createDashboardRouter, createSessionKeys, SESSION_COOKIE, type DashboardOptions } from '../../src/dashboard';
import { createWebhookRouter } from '../../src/http';
import { createLogger, type Clock } from '../../src/shared';
import { buildJobDelivery, SqliteStore } from '../../src/store';
import { textOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook } from '../helpers/relay-harness';
import { FAILURE_CATALOGUE } from '../../src/notify';

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const T0 = Date.parse('2026-03-06T16:00:00Z');
const REPORTS = 60;

/**
 * Issue 15, "parse once": the dashboard reads the report fields the webhook stored, so a page of
 * many report rows loads no body. The store is the real SQLite store behind the real webhook route;
 * only getDeliveryBody is wrapped, to count which rows it is asked for.
 */
describe('the dashboard reads typed rows, not bodies (issue 15)', () => {
  let dataDir: string;
  let store: SqliteStore;
  let server: http.Server;
  let url: string;
  let bodyReads: number[];
  const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(T0).cookie}`;

  beforeAll(async () => {
    dataDir = makeTempDir('dashboard-reads-');
    store = SqliteStore.open({ dataDir });
    bodyReads = [];
    const clock: Clock = { now: () => T0 };
    const logger = createLogger({ level: 'warn', format: 'json', destination: { write: () => undefined } });
    const dashboardStore: DashboardOptions['store'] = {
      listDeliveries: (options) => store.listDeliveries(options),
      getDelivery: (id) => store.getDelivery(id),
      getDeliveryBody: (id) => {
        bodyReads.push(id);
        return store.getDeliveryBody(id);
      },
      getSentMessage: (id, route) => store.getSentMessage(id, route),
      listSentMessages: (id) => store.listSentMessages(id),
      requeue: (now, id) => store.requeue(now, id),
      retryNow: (id, now) => store.retryNow(id, now),
      readQueue: () => store.readQueue(),
      listRouteMails: (ids) => store.listRouteMails(ids),
    };
    const app = express();
    app.use(
      createWebhookRouter({
        source: { path: '/webhook', name: 'default', secrets: [], netbox: {} },
        maxBytes: 1 << 20,
        rateLimit: 0,
        store,
        clock,
        logger,
      }),
    );
    app.use(
      '/ui',
      createDashboardRouter({
        adminToken: ADMIN_TOKEN,
        store: dashboardStore,
        clock,
        logger,
        timezone: 'UTC',
        failures: FAILURE_CATALOGUE,
      }),
    );
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    bodyReads = [];
  });

  it('lists many report rows without loading a body; only a watchdog record and a row stored before the typed fields load theirs', async () => {
    // A row as a relay before migration 006 stored it: no typed fields, only the body.
    const legacyBody = buildBody({
      data: buildReportData({ id: 900, total_passed: 1, total_count: 4, middle_passed: 1, middle_count: 4 }),
    });
    const legacy = await store.insertDelivery({
      dedupKey: '900@legacy',
      reportId: 900,
      reportCreated: '2023-04-12T19:36:33.690567Z',
      completedAt: '2023-04-12T19:36:37.739Z',
      sender: '127.0.0.1',
      body: legacyBody,
      receivedAt: T0,
    });
    for (let id = 1; id <= REPORTS; id += 1) {
      const data = buildReportData({
        id,
        created: new Date(T0 + id * 1000).toISOString(),
        total_passed: id % 9,
        total_count: 8 + (id % 9),
        middle_passed: id % 9,
        middle_count: 8 + (id % 9),
      });
      expect((await postWebhook(`${url}/webhook`, buildBody({ data }))).status).toBe(202);
    }
    const watchdog = await store.insertDelivery(
      buildJobDelivery({
        kind: 'watchdog',
        alert: { kind: 'overdue', silentSince: T0, expectEveryMs: 3_600_000, detectedAt: T0 + 7_200_000 },
      }),
    );

    const page = await fetch(`${url}/ui`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    const text = textOf(await page.text());
    expect([...bodyReads].sort((a, b) => a - b)).toEqual([legacy.id, watchdog.id]);
    // Every row still says what it holds: the reports from their fields, the others from their bodies.
    for (let id = 1; id <= REPORTS; id += 1) expect(text).toContain(`Report ${id}: ${id % 9}/${8 + (id % 9)} passed`);
    expect(text).toContain('Report 900: 1/4 passed');
    expect(text).toContain('Watchdog: no report received');
    expect(text).toContain('Pass percentage per severity (last 30 reports)');
  });

  it('shows one report delivery without loading its body', async () => {
    const [newest] = await store.listDeliveries({ limit: 100 }).then((rows) => rows.filter((r) => r.report));
    bodyReads = [];
    const page = await fetch(`${url}/ui/deliveries/${newest.id}`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(textOf(await page.text())).toContain(`Report ${newest.reportId}: `);
    expect(bodyReads).toEqual([]);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import type { Clock } from '../../src/shared';
import { SqliteStore, type DeliveryStateChange, type NewRouteMail } from '../../src/store';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { makeReportDelivery } from '../contract/store-contract';
import { saveReport } from '../helpers/store-writes';
import { startDashboard } from '../helpers/dashboard';
import type { HttpListener } from '../helpers/http-listener';

jest.setTimeout(180_000);

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const SHOTS = path.resolve(__dirname, '../../test-output/dashboard-list');
const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-03-01T06:00:00Z');
const NOW = T0 + 40 * DAY_MS;
const COUNT = 130;

/** Report n arrives 6 hours after report n-1 (so the 130 reports span 32 days). */
const receivedAt = (n: number) => T0 + (n - 1) * 6 * 3_600_000;
const isRetrying = (n: number) => n % 10 === 0;
const isDead = (n: number) => n % 17 === 0;
const hasHighFailure = (n: number) => n % 3 === 0;

/**
 * Issue 17, item 4: the list an on-call works with, in a real Chromium with JavaScript off, on a
 * real SQLite store seeded through the Store API with more than one page of deliveries (states,
 * route decisions, failing results as enrichment stores them).
 */
describe('the deliveries list: counts, filters, keyset pages, retry now, phone and dark mode', () => {
  let dataDir: string;
  let store: SqliteStore;
  let dashboard: HttpListener;
  let url: string;
  let browser: Browser;
  const ids = new Map<number, number>(); // report id → delivery id

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    dataDir = makeTempDir('dashboard-list-');
    store = SqliteStore.open({ dataDir });
    await seed();
    const clock: Clock = { now: () => NOW };
    dashboard = await startDashboard({
      adminToken: ADMIN_TOKEN,
      store,
      clock,
      sources: [{ name: 'default', netbox: { url: 'https://netbox.example.com' } }],
      routeNames: ['core', 'edge'],
    });
    url = dashboard.url;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard.close();
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function seed(): Promise<void> {
    const plans = new Map<number, NewRouteMail[]>(); // report id → its route decisions
    for (let n = 1; n <= COUNT; n += 1) {
      const high = hasHighFailure(n) ? 7 : 10;
      const data = buildReportData({
        id: n,
        created: new Date(receivedAt(n) - 60_000).toISOString(),
        high_passed: high,
        high_count: 10,
        middle_passed: 40,
        middle_count: 50,
        total_passed: high + 40,
        total_count: 60,
      });
      const delivery = makeReportDelivery(buildBody({ data }), receivedAt(n));
      const { id } = await store.insertDelivery(delivery);
      ids.set(n, id);
      const decide = (route: string, position: number) => ({
        route,
        position,
        outcome: 'send' as const,
        reason: 'matched',
        reminder: false,
      });
      plans.set(n, n % 5 === 0 ? [decide('core', 0), decide('edge', 1)] : [decide(n % 2 ? 'edge' : 'core', 0)]);
      const failing = [{ device: `spine-${n}.dc1`, test: n % 2 ? 'bgp_peers_up' : 'ntp_synced', severity: 'HIGH' as const }];
      const created = new Date(receivedAt(n) - 60_000).toISOString();
      await saveReport(store, {
        dedupKey: delivery.dedupKey,
        series: 'https://netbox.example.com|',
        reportId: n,
        created,
        createdMs: Date.parse(created),
        counts: {
          overall: { passed: high + 40, count: 60 },
          HIGH: { passed: high, count: 10 },
          MIDDLE: { passed: 40, count: 50 },
          LOW: { passed: 0, count: 0 },
        },
        failing,
      });
    }
    await store.claimDue({ now: NOW - DAY_MS, limit: COUNT, owner: 'seed', leaseMs: 60_000 });
    // One batch settles every attempt, as the worker does: each delivery's route plan and its outcome.
    const outcome = (n: number): DeliveryStateChange =>
      isRetrying(n)
        ? { state: 'retrying', nextAttemptAt: NOW + 3_600_000, error: '451 4.3.0 mailbox busy\u001b[31m', code: 'SMTP_4XX' }
        : isDead(n)
          ? { state: 'dead', error: '550 5.1.1 user unknown', code: 'SMTP_5XX' }
          : { state: 'sent', messageId: `<${n}@relay>` };
    await store.settleBatch({
      now: NOW - 1000,
      deliveries: [...ids].map(([n, id]) => ({ id, plan: plans.get(n), routes: [], sent: [], state: outcome(n) })),
      reports: [],
    });
  }

  async function openPage(options: { width: number; dark?: boolean }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: options.width, height: 900 },
      colorScheme: options.dark ? 'dark' : 'light',
    });
    await context.addCookies([
      {
        name: SESSION_COOKIE,
        value: createSessionKeys(ADMIN_TOKEN).issue(NOW).cookie,
        url: `${url}/ui`,
        httpOnly: true,
        sameSite: 'Strict',
      },
    ]);
    return { context, page: await context.newPage() };
  }

  const shownIds = (page: Page) =>
    page.locator('tr[data-delivery]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-delivery'))));
  const shownReports = async (page: Page) => {
    const byDelivery = new Map([...ids].map(([n, id]) => [id, n]));
    return (await shownIds(page)).map((id) => byDelivery.get(id)!);
  };
  const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

  it('counts per state, pages by keyset beyond the newest 100 and back, and flags HIGH failures with a NetBox link', async () => {
    const { context, page } = await openPage({ width: 1280 });
    await page.goto(`${url}/ui`);
    const retrying = range(COUNT, 1).filter(isRetrying).length;
    const dead = range(COUNT, 1).filter((n) => !isRetrying(n) && isDead(n)).length;
    await expect(page.locator('[data-count=retrying] strong').textContent()).resolves.toBe(String(retrying));
    await expect(page.locator('[data-count=dead] strong').textContent()).resolves.toBe(String(dead));
    await expect(page.locator('[data-count=sent] strong').textContent()).resolves.toBe(String(COUNT - retrying - dead));

    expect(await shownReports(page)).toEqual(range(COUNT, 31));
    const high = page.locator(`tr[data-delivery="${ids.get(129)}"]`);
    await expect(high.getAttribute('data-high-failing')).resolves.toBe('true');
    await expect(high.locator('.flag-high').textContent()).resolves.toBe('HIGH failing 3/10');
    await expect(page.locator(`tr[data-delivery="${ids.get(128)}"] .flag-high`).count()).resolves.toBe(0);
    await expect(high.locator('a.netbox-link').getAttribute('href')).resolves.toBe(
      'https://netbox.example.com/plugins/validity/reports/129/',
    );
    // The retrying row says when it is tried next and why it failed, in words, with the control character neutralised.
    const waiting = page.locator(`tr[data-delivery="${ids.get(130)}"]`);
    await expect(waiting.locator('.next-attempt').textContent()).resolves.toBe('next try 2026-04-10 07:00:00 UTC');
    await expect(waiting.locator('.error-words').textContent()).resolves.toContain('refused the message for now');
    await expect(waiting.locator('.error').textContent()).resolves.not.toContain('\u001b');
    await page.screenshot({ path: path.join(SHOTS, 'desktop-light.png'), fullPage: true });

    await page.click('a[rel=next]');
    await page.waitForURL((u) => u.searchParams.has('before'), { waitUntil: 'load' });
    const next = new URL(page.url());
    expect(next.searchParams.get('before')).toBe(String(ids.get(31)));
    expect([...next.searchParams.keys()]).not.toContain('offset');
    expect(await shownReports(page)).toEqual(range(30, 1));
    await expect(page.locator('a[rel=next]').count()).resolves.toBe(0);

    await page.click('a[rel=prev]');
    await page.waitForURL((u) => u.searchParams.has('after'), { waitUntil: 'load' });
    expect(await shownReports(page)).toEqual(range(COUNT, 31));
    await expect(page.locator('a[rel=prev]').count()).resolves.toBe(0);
    await context.close();
  });

  it('filters by state, route, report id, date range and device name through the form, and says which filter is wrong', async () => {
    const { context, page } = await openPage({ width: 1280 });
    await page.goto(`${url}/ui`);
    await page.selectOption('select[name=state]', 'retrying');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL((u) => u.searchParams.get('state') === 'retrying', { waitUntil: 'load' });
    expect(await shownReports(page)).toEqual(range(COUNT, 1).filter(isRetrying));
    await expect(page.locator('tr[data-delivery] button', { hasText: 'Retry now' }).count()).resolves.toBe(13);

    await page.goto(`${url}/ui?route=core&from=2026-03-10&to=2026-03-12`);
    // Reports received on 10–12 March (UTC): n = 36 (at midnight) … 47; core: the even ones and every fifth.
    expect(await shownReports(page)).toEqual(range(47, 36).filter((n) => n % 2 === 0 || n % 5 === 0));
    await expect(page.locator('input[name=from]').inputValue()).resolves.toBe('2026-03-10');

    await page.goto(`${url}/ui`);
    await page.fill('input[name=q]', 'SPINE-77.dc');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL((u) => u.searchParams.get('q') === 'SPINE-77.dc', { waitUntil: 'load' });
    expect(await shownReports(page)).toEqual([77]);
    await page.goto(`${url}/ui?q=bgp_peers&report=45`);
    expect(await shownReports(page)).toEqual([45]);
    await page.goto(`${url}/ui?q=bgp_peers&report=44`);
    expect(await shownReports(page)).toEqual([]);
    await expect(page.locator('table.deliveries').textContent()).resolves.toContain('No delivery matches these filters.');

    const wrong = await page.goto(`${url}/ui?report=abc&from=2026-02-30&state=lost`);
    expect(wrong!.status()).toBe(400);
    const problems = await page.locator('.filter-issues li').evaluateAll((items) => items.map((i) => i.getAttribute('data-param')));
    expect(problems.sort()).toEqual(['from', 'report', 'state']);
    await expect(page.locator('.filter-issues').textContent()).resolves.toContain('report must be a NetBox report id');
    await expect(page.locator('input[name=report]').inputValue()).resolves.toBe('abc');
    await context.close();
  });

  it('retries a waiting delivery now and keeps the filters', async () => {
    const { context, page } = await openPage({ width: 1280 });
    await page.goto(`${url}/ui?state=retrying&route=core`);
    const target = ids.get(120)!;
    await page.click(`tr[data-delivery="${target}"] button`);
    await page.waitForURL((u) => u.searchParams.has('retried_now'), { waitUntil: 'load' });
    const back = new URL(page.url());
    expect([back.searchParams.get('state'), back.searchParams.get('route'), back.searchParams.get('retried_now')]).toEqual([
      'retrying',
      'core',
      String(target),
    ]);
    await expect(page.locator('[role=status]').textContent()).resolves.toContain(`Delivery #${target} is due now`);
    expect(await store.getDelivery(target)).toMatchObject({ state: 'retrying', nextAttemptAt: NOW, attempts: 1 });
    await context.close();
  });

  it('fits 390 px without horizontal scrolling, in light and dark, with chart dates that do not collide, all by keyboard', async () => {
    for (const dark of [false, true]) {
      for (const width of [390, 1280]) {
        const { context, page } = await openPage({ width, dark });
        await page.goto(`${url}/ui`);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow).toBeLessThanOrEqual(0);
        const chart = page.locator(width < 640 ? 'svg.pass-chart-narrow' : 'svg.pass-chart');
        await expect(chart.isVisible()).resolves.toBe(true);
        const boxes = await chart
          .locator('text.axis-day')
          .evaluateAll((labels) => labels.map((l) => l.getBoundingClientRect().toJSON() as { left: number; right: number }));
        expect(boxes.length).toBeGreaterThan(2);
        for (let i = 1; i < boxes.length; i += 1) expect(boxes[i].left).toBeGreaterThan(boxes[i - 1].right);
        const labels = await chart.locator('text.axis-day').allTextContents();
        expect(labels[labels.length - 1]).toMatch(/^\d{1,2} (Mar|Apr)$/);
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
        expect(background).toBe(dark ? 'rgb(18, 22, 25)' : 'rgb(244, 246, 247)');
        await page.screenshot({
          path: path.join(SHOTS, `${width === 390 ? 'phone-390' : 'desktop'}-${dark ? 'dark' : 'light'}.png`),
          fullPage: true,
        });
        await page.screenshot({
          path: path.join(SHOTS, `${width === 390 ? 'phone-390' : 'desktop'}-${dark ? 'dark' : 'light'}-first-screen.png`),
          fullPage: false,
        });
        await context.close();
      }
    }

    // Keyboard only: Tab reaches every filter, the Filter button, the pager and a Retry now button.
    const { context, page } = await openPage({ width: 390 });
    await page.goto(`${url}/ui?state=retrying`);
    const reached = new Set<string>();
    for (let i = 0; i < 80; i += 1) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate<string>(
          `(() => { const el = document.activeElement; return el ? el.tagName.toLowerCase() + ':' + (el.getAttribute('name') ?? el.textContent.trim()) : ''; })()`,
        ),
      );
    }
    for (const stop of [
      'select:state',
      'input:route',
      'input:report',
      'input:from',
      'input:to',
      'input:q',
      'button:Filter',
      'button:Retry now',
    ])
      expect(reached).toContain(stop);
    await context.close();
  });
});

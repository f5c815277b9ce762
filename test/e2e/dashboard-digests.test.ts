import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import type { Clock } from '../../src/shared';
import { buildJobDelivery, SqliteStore } from '../../src/store';
import { launchChromium } from '../helpers/browser';
import { makeTempDir } from '../helpers/relay-harness';
import { startDashboard } from '../helpers/dashboard';
import type { HttpListener } from '../helpers/http-listener';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const WEEK_MS = 7 * 86_400_000;
const T0 = Date.parse('2026-03-02T07:00:00Z');
const NOW = T0 + 3 * WEEK_MS + 3_600_000;

/**
 * Issue 19, item 6: the digests beside the deliveries, in a real Chromium with JavaScript off: each
 * digest route's next run, the latest digests linking their deliveries, on a phone without sideways scrolling.
 */
describe('the dashboard lists digests beside the deliveries', () => {
  let dataDir: string;
  let store: SqliteStore;
  let dashboard: HttpListener;
  let url: string;
  let browser: Browser;
  const deliveryIds: number[] = [];

  beforeAll(async () => {
    dataDir = makeTempDir('dashboard-digests-');
    store = SqliteStore.open({ dataDir });
    await store.queueDigest({
      route: 'weekly-core-network-compliance',
      periodStart: T0 - WEEK_MS,
      periodEnd: T0,
      late: false,
      now: T0,
      job: null,
    });
    for (let i = 0; i < 3; i += 1) {
      const period = {
        route: 'weekly-core-network-compliance',
        periodStart: T0 + i * WEEK_MS,
        periodEnd: T0 + (i + 1) * WEEK_MS,
        late: i === 1,
      };
      const queuedAt = period.periodEnd + (period.late ? 7_200_000 : 5_000);
      const { deliveryId } = await store.queueDigest({
        ...period,
        now: queuedAt,
        job: buildJobDelivery({ kind: 'digest', job: { ...period, queuedAt } }),
      });
      deliveryIds.push(deliveryId!);
    }
    const clock: Clock = { now: () => NOW };
    dashboard = await startDashboard({
      adminToken: ADMIN_TOKEN,
      store,
      clock,
      timezone: 'Europe/Berlin',
      digests: {
        schedules: () => [
          {
            route: 'weekly-core-network-compliance',
            schedule: '0 8 * * MON',
            timezone: 'Europe/Berlin',
            nextRunAt: Date.parse('2026-03-30T06:00:00Z'),
          },
        ],
        periods: (options) => store.listDigestPeriods(options),
      },
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

  it('shows the next run and the latest digests, each linking its delivery, within 390 px', async () => {
    for (const width of [390, 1280]) {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width, height: 900 } });
      await context.addCookies([
        {
          name: SESSION_COOKIE,
          value: createSessionKeys(ADMIN_TOKEN).issue(NOW).cookie,
          url: `${url}/ui`,
          httpOnly: true,
          sameSite: 'Strict',
        },
      ]);
      const page = await context.newPage();
      await page.goto(`${url}/ui`);
      const routeRow = page.locator('tr[data-digest-route="weekly-core-network-compliance"]');
      await expect(routeRow.textContent()).resolves.toContain('2026-03-30 08:00:00 CEST');
      const links = await page.locator('table.digests a').allTextContents();
      expect(links).toEqual(deliveryIds.map((id) => `#${id}`).reverse());
      await expect(page.locator('table.digests').textContent()).resolves.toContain('weekly-core-network-compliance (late)');
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await page.locator('table.digests a').first().click();
      await expect(page.locator('h1').first().textContent()).resolves.toContain(`Delivery #${deliveryIds[2]}`);
      await expect(page.locator('dd').first().textContent()).resolves.toContain('Digest weekly-core-network-compliance');
      await context.close();
    }
  });
});

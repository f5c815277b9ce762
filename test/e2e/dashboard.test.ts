import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const SHOTS = path.resolve(__dirname, '../../test-output/dashboard');

describe('the dashboard in a real browser (JavaScript off)', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      MAIL_BCC: 'audit@example.com',
      ADMIN_TOKEN,
      NETBOX_URL: 'https://netbox.example.com',
    });
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('logs in, lists deliveries, charts pass rates, retries a dead delivery and shows the exact mail sent', async () => {
    // Four reports, one a day; the fourth is refused by the server (550) and dies.
    const reports = [
      { id: 101, high: [10, 10], middle: [40, 50], low: [5, 5] },
      { id: 102, high: [8, 10], middle: [45, 50], low: [0, 0] },
      { id: 103, high: [5, 10], middle: [48, 50], low: [3, 5] },
      { id: 104, high: [9, 10], middle: [50, 50], low: [5, 5] },
    ];
    smtp.setBehaviour((attempt) => (attempt === 4 ? { type: 'reject', code: 550, message: 'mailbox unavailable' } : { type: 'accept' }));
    const ids: number[] = [];
    for (const [i, r] of reports.entries()) {
      const data = buildReportData({
        id: r.id,
        created: `2026-03-0${i + 1}T06:00:00.000000Z`,
        high_passed: r.high[0],
        high_count: r.high[1],
        middle_passed: r.middle[0],
        middle_count: r.middle[1],
        low_passed: r.low[0],
        low_count: r.low[1],
        total_passed: r.high[0] + r.middle[0] + r.low[0],
        total_count: r.high[1] + r.middle[1] + r.low[1],
      });
      const res = await postWebhook(relay.webhookUrl, buildBody({ data }));
      expect(res.status).toBe(202);
      ids.push(res.json.id);
      await waitUntil(() => relay.workerOutcomes.length === i + 1, 10_000, `the outcome of report ${r.id}`);
    }
    const deadId = ids[3];
    expect((await relay.relay.store.getDelivery(deadId))!.state).toBe('dead');

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();

    // Not logged in: the dashboard sends the browser to the login form.
    await page.goto(`${relay.url}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/login');
    await page.fill('input[name=token]', 'not-the-admin-token-at-all');
    await page.click('button[type=submit]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('That is not the admin token.');
    await page.screenshot({ path: path.join(SHOTS, '1-login-refused.png'), fullPage: true });

    await page.fill('input[name=token]', ADMIN_TOKEN);
    await page.click('button[type=submit]');
    // A click waits for the navigation to start, not for the new page: wait until it has loaded.
    await page.waitForURL((url) => url.pathname === '/ui', { waitUntil: 'load' });
    expect(new URL(page.url()).pathname).toBe('/ui');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'cr_ui_session', httpOnly: true, sameSite: 'Strict', path: '/ui' });
    expect(cookie.value).not.toContain(ADMIN_TOKEN);

    // Every delivery is listed with its state; only the dead one has a retry button.
    const rows = page.locator('tr[data-delivery]');
    await expect(rows.count()).resolves.toBe(4);
    const dead = page.locator(`tr[data-delivery="${deadId}"]`);
    await expect(dead.getAttribute('data-state')).resolves.toBe('dead');
    await expect(dead.textContent()).resolves.toContain('SMTP_5XX');
    await expect(page.locator('tr[data-delivery] button').count()).resolves.toBe(1);

    // The chart: one point per report with results in that severity (report 102 has no LOW results).
    const chart = page.locator('svg.pass-chart');
    await expect(chart.locator('g[data-series=HIGH] circle').count()).resolves.toBe(4);
    await expect(chart.locator('g[data-series=LOW] circle').count()).resolves.toBe(3);
    await expect(chart.locator('g[data-series=HIGH] circle title').nth(2).textContent()).resolves.toBe(
      'HIGH in report 103 (2026-03-03 06:00:00 UTC): 5/10 passed, 50.0%',
    );
    const box = await chart.boundingBox();
    expect(box!.width).toBeGreaterThan(500);
    await page.screenshot({ path: path.join(SHOTS, '2-deliveries-and-chart.png'), fullPage: true });

    // A form post without the session's CSRF token is refused and changes nothing.
    const forged = await page.request.post(`${relay.url}/ui/deliveries/${deadId}/retry`, { form: { csrf: 'forged' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect((await relay.relay.store.getDelivery(deadId))!.state).toBe('dead');

    // Retry the dead one: it is queued again and, the server accepting now, mailed.
    await dead.locator('button').click();
    await page.waitForURL((url) => url.searchParams.has('retried'), { waitUntil: 'load' });
    expect(new URL(page.url()).searchParams.get('retried')).toBe(String(deadId));
    await expect(page.locator('[role=status]').textContent()).resolves.toContain(`Delivery #${deadId} is queued again.`);
    await smtp.waitFor(4);
    await waitUntil(async () => (await relay.relay.store.getDelivery(deadId))!.state === 'sent', 10_000, 'the retried delivery to be sent');
    await page.reload();
    await expect(page.locator(`tr[data-delivery="${deadId}"]`).getAttribute('data-state')).resolves.toBe('sent');
    await page.screenshot({ path: path.join(SHOTS, '3-after-retry.png'), fullPage: true });

    // The delivery's page shows the mail exactly as the server received it, and where it went.
    await page.click(`a[href="/ui/deliveries/${deadId}"]`);
    const received = smtp.received.find((m) => m.parsed.subject?.includes('report 104'))!;
    await expect(page.locator('pre.mail-headers').textContent()).resolves.toContain(`Message-ID: ${received.parsed.messageId}`);
    await expect(page.locator('pre.mail-headers').textContent()).resolves.not.toContain('audit@example.com');
    await expect(page.locator('main').textContent()).resolves.toContain('netops@example.com, audit@example.com');
    const mailFrame = page.frameLocator('iframe[sandbox=""]');
    await expect(mailFrame.locator('body').innerText()).resolves.toContain('Compliance report 104');
    // The trend chart shows as the recipient saw it (a table in the kept HTML), its report ids under it.
    await expect(mailFrame.locator('table.chart').innerText()).resolves.toMatch(/#\d+[\s\S]*#104/);
    const iframe = page.locator('iframe[sandbox=""]');
    await iframe.scrollIntoViewIfNeeded();
    await iframe.screenshot({ path: path.join(SHOTS, '5-mail-html-part.png') });
    await expect(page.locator('pre.mail-text').textContent()).resolves.toBe(received.parsed.text);
    const eml = await page.request.get(`${relay.url}/ui/deliveries/${deadId}/message.eml`);
    expect(Buffer.from(await eml.body()).equals(received.raw)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, '4-delivery-page.png'), fullPage: true });

    // Logging out ends the session.
    await page.goto(`${relay.url}/ui`);
    await page.click('header button');
    await page.waitForURL((url) => url.pathname === '/ui/login', { waitUntil: 'load' });
    expect(new URL(page.url()).pathname).toBe('/ui/login');
    await page.goto(`${relay.url}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/login');
    await context.close();
  });
});

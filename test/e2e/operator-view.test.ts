import fs from 'node:fs';
import path from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'operator-view-admin-token-0123456789';
const SHOTS = path.resolve(__dirname, '../../test-output/operator-view');
const ROUTES = `
routes:
  - name: on-call
    to: oncall@example.com
    continue: true
  - name: auditors
    to: auditors@example.com
    bcc: archive@example.com
`;

/** Logs the page in with the admin token and waits for the list. */
async function logIn(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/ui/login`);
  await page.fill('input[name=token]', ADMIN_TOKEN);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => u.pathname === '/ui', { waitUntil: 'load' });
}

/** GETs an admin API path with the bearer token. */
function getAdmin(url: string, pathname: string): Promise<Response> {
  return fetch(`${url}${pathname}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
}

/** The addresses of a parsed header (To, Cc). */
const addressesOf = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address));

/** The value of one gauge in the exposition text. */
async function readGauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} is not in /metrics`);
  return Number(line.split(' ')[1]);
}

describe('the operator view in a real browser (JavaScript off)', () => {
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay | undefined;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
    relay = undefined;
    smtp = undefined;
  });

  it("shows every route's mail of a delivery, on its page and in the API, each with its own .eml", async () => {
    smtp = await startSmtpPeer();
    const dir = makeTempDir('operator-view-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    relay = await startTestRelay({ SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, 'routes.yaml'), ADMIN_TOKEN });
    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 301 }) }));
    expect(res.status).toBe(202);
    const id = res.json.id as number;
    const received = await smtp.waitFor(2);
    await waitUntil(async () => ((await relay!.relay.store.listSentMessages(id)).length === 2 ? true : undefined), 10_000, 'both copies');
    const byRoute = new Map(received.map((m) => [String(m.parsed.headers.get('x-compliance-route')), m]));

    // The API: one entry per route, with its recipients, Message-ID and the exact bytes behind its .eml.
    const api = (await (await getAdmin(relay.url, `/api/deliveries/${id}`)).json()) as {
      delivery: { mails: { route: string; recipients: string[]; messageId: string; sentAt: string; html: string; eml: string }[] };
    };
    const { mails } = api.delivery;
    expect(mails.map((m) => [m.route, m.recipients])).toEqual([
      ['on-call', ['oncall@example.com']],
      ['auditors', ['auditors@example.com', 'archive@example.com']],
    ]);
    for (const mail of mails) {
      const sent = byRoute.get(mail.route)!;
      expect(mail.messageId).toBe(sent.parsed.messageId);
      expect(mail.html).toContain('301');
      expect(Number.isNaN(Date.parse(mail.sentAt))).toBe(false);
      const eml = await getAdmin(relay.url, mail.eml);
      expect(eml.headers.get('content-type')).toMatch(/^message\/rfc822/);
      const raw = Buffer.from(await eml.arrayBuffer());
      expect(raw.equals(sent.raw)).toBe(true);
    }
    expect((await getAdmin(relay.url, `/api/deliveries/${id}/message.eml?route=nobody`)).status).toBe(404);

    // The delivery page: both mails, each with its route, recipients, Message-ID, rendered parts and .eml.
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await logIn(page, relay.url);
    await page.goto(`${relay.url}/ui/deliveries/${id}`);
    const sections = page.locator('section.route-mail');
    await expect(sections.count()).resolves.toBe(2);
    const expected = { 'on-call': ['oncall@example.com'], auditors: ['auditors@example.com'] } as const;
    for (const [route, to] of Object.entries(expected)) {
      const section = page.locator(`section.route-mail[data-route="${route}"]`);
      await expect(section.locator('h2').textContent()).resolves.toContain(route);
      await expect(section.locator('.mail-message-id').textContent()).resolves.toBe(byRoute.get(route)!.parsed.messageId);
      // The verdict the mail was sent with, and its subject that leads with it: the dashboard says what the mail said.
      const verdict = byRoute.get(route)!.parsed.headers.get('x-compliance-verdict') as string;
      expect(verdict).toMatch(/^(first|better|worse|mixed|same)$/);
      await expect(section.locator('.mail-verdict').textContent()).resolves.toBe(verdict);
      await expect(section.locator('.mail-subject').textContent()).resolves.toBe(byRoute.get(route)!.parsed.subject);
      await expect(section.locator('.mail-recipients').textContent()).resolves.toContain(to[0]);
      await expect(section.frameLocator('iframe[sandbox=""]').locator('body').innerText()).resolves.toContain('Compliance report 301');
      const href = await section.locator('a.mail-eml').getAttribute('href');
      const download = await page.request.get(`${relay.url}${href}`);
      const parsed = await simpleParser(Buffer.from(await download.body()));
      expect(addressesOf(parsed.to)).toEqual(to);
      expect(parsed.messageId).toBe(byRoute.get(route)!.parsed.messageId);
    }
    // Bcc is in the envelope (shown on the page), never in the bytes.
    await expect(page.locator('section.route-mail[data-route="auditors"] .mail-recipients').textContent()).resolves.toBe(
      'auditors@example.com, archive@example.com',
    );
    await page.screenshot({ path: path.join(SHOTS, '1-two-routes-delivery-page.png'), fullPage: true });
    await context.close();
  });

  it('SMTP down: a banner on every page, /readyz 200 naming smtp, the gauge at 1; Retry and Try now resume the queue', async () => {
    // The server refuses the first mail for good (a dead delivery to retry later), then goes away.
    smtp = await startSmtpPeer({ server: { closeTimeout: 100 } });
    const port = smtp.port;
    smtp.setBehaviour((attempt) => (attempt === 1 ? { type: 'reject', code: 550, message: 'mailbox unavailable' } : { type: 'accept' }));
    relay = await startTestRelay(
      // A pause of 10 minutes: only "try now" can end it within this test.
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', ADMIN_TOKEN },
      { random: () => 1, tune: quickRetries(600_000, 600_000) },
    );
    const post = async (reportId: number) => {
      const res = await postWebhook(relay!.webhookUrl, buildBody({ data: buildReportData({ id: reportId }) }));
      expect(res.status).toBe(202);
      return res.json.id as number;
    };
    const deadId = await post(401);
    await waitUntil(async () => ((await relay!.relay.store.getDelivery(deadId))!.state === 'dead' ? true : undefined), 10_000, 'dead');
    await smtp.close();
    smtp = undefined;
    const waitingId = await post(402);
    await waitUntil(() => relay!.relay.worker.breaker.state === 'open' || undefined, 20_000, 'the queue to pause');

    // Still accepting: /readyz 200 (a load balancer keeps the relay), naming SMTP as paused, with the next try.
    const ready = await fetch(`${relay.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; smtp: { ok: boolean; state: string; nextTryAt: string } };
    expect(body).toMatchObject({ status: 'ready', smtp: { ok: false, state: 'paused' } });
    expect(Date.parse(body.smtp.nextTryAt)).toBe(relay.relay.worker.breaker.openUntil);
    expect(await readGauge(relay.url, 'compliance_relay_smtp_paused')).toBe(1);
    expect(await readGauge(relay.url, 'compliance_relay_smtp_paused_until_seconds')).toBe(relay.relay.worker.breaker.openUntil / 1000);
    expect(await post(403)).toBeGreaterThan(waitingId);

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await logIn(page, relay.url);
    const banner = page.locator('.queue-paused');
    await expect(banner.getAttribute('data-pause-state')).resolves.toBe('paused');
    await expect(banner.textContent()).resolves.toMatch(/Sending paused since .+, next try at .+, last error [A-Z_0-9]+: /);
    await page.screenshot({ path: path.join(SHOTS, '2-smtp-paused-list.png'), fullPage: true });
    await page.goto(`${relay.url}/ui/deliveries/${waitingId}`);
    await expect(page.locator('.queue-paused button').textContent()).resolves.toBe('Try now');
    await page.screenshot({ path: path.join(SHOTS, '3-smtp-paused-delivery-page.png'), fullPage: true });

    // A forged "try now" (no CSRF token) is refused and changes nothing.
    const forged = await page.request.post(`${relay.url}/ui/try-now`, { form: { csrf: 'forged' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect(relay.relay.worker.breaker.state).toBe('open');

    // Retry on the dead one while paused: it is queued, and the relay says it probes the server now.
    const pausedUntil = relay.relay.worker.breaker.openUntil;
    await page.goto(`${relay.url}/ui`);
    await page.locator(`tr[data-delivery="${deadId}"] button`).click();
    await page.waitForURL((u) => u.searchParams.has('retried'), { waitUntil: 'load' });
    await expect(page.locator('[role=status]').textContent()).resolves.toContain(
      `Delivery #${deadId} is queued again. Sending was paused, so the mail server is being tried now`,
    );
    // The probe found the server still down: paused again, for the next backoff step.
    await waitUntil(() => (relay!.relay.worker.breaker.openUntil > pausedUntil ? true : undefined), 20_000, 'the failed probe');
    await page.screenshot({ path: path.join(SHOTS, '4-retry-while-paused.png'), fullPage: true });

    // The server is back: "try now" resumes the queue at once, oldest first, each mail once.
    smtp = await startSmtpPeer({ port });
    await page.reload();
    await page.locator('.queue-paused button').click();
    await page.waitForURL((u) => u.searchParams.get('try_now') === 'probing-now', { waitUntil: 'load' });
    await expect(page.locator('[role=status]').textContent()).resolves.toContain('Trying the mail server now');
    const mails = await smtp.waitFor(3, 20_000);
    expect(mails.map((m) => Number(m.parsed.headers.get('x-compliance-report-id')))).toEqual([401, 402, 403]);
    await waitUntil(() => relay!.relay.worker.breaker.state === 'closed' || undefined, 10_000, 'the breaker to close');
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all sent');
    expect(await readGauge(relay.url, 'compliance_relay_smtp_paused')).toBe(0);
    expect(((await (await fetch(`${relay.url}/readyz`)).json()) as { smtp: unknown }).smtp).toMatchObject({ ok: true, state: 'ok' });
    await page.goto(`${relay.url}/ui`);
    await expect(page.locator('.queue-paused').count()).resolves.toBe(0);
    await page.screenshot({ path: path.join(SHOTS, '5-resumed.png'), fullPage: true });
    expect(smtp.received).toHaveLength(3);
    await context.close();
  });
});

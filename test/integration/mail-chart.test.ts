import fs from 'node:fs';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import { TREND_CHART_HEIGHT, TREND_CHART_MARKER_COLOUR, TREND_CHART_PLOT, TREND_CHART_WIDTH } from '../../src/mail';
import { findPackageRoot } from '../../src/shared';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';

/**
 * Issue 19: each report mail carries a small chart of pass ratio per severity over the last reports of
 * its series, the current report marked, as an inline PNG (cid:) drawn on the server. A series whose
 * HIGH ratio falls while the others rise goes through the real relay to a real SMTP server; the PNG is
 * decoded and looked at pixel by pixel, and the mail is opened in Chromium at 375 px, light and dark
 * (screenshots in test-output/mail-chart/).
 */

const OUT = path.join(findPackageRoot(), 'test-output', 'mail-chart');
const PAGE_URL = 'http://mail.invalid/';

const ROUTES = `routes:
  - name: team
    to: team@example.com
    continue: true
  - name: quiet
    to: quiet@example.com
    chart: false
`;

/** HIGH falls 100 → 25 %, MIDDLE and LOW rise 0 → 100 %, overall rises 20 → 85 %. */
const SERIES = [
  { id: 101, high: 4, middle: 0, low: 0 },
  { id: 102, high: 3, middle: 4, low: 4 },
  { id: 103, high: 2, middle: 8, low: 6 },
  { id: 104, high: 1, middle: 8, low: 8 },
];

function body(r: (typeof SERIES)[number], day: number): Buffer {
  return buildBody({
    version: '4.6',
    timestamp: `2026-03-0${day}T06:00:05.000000+00:00`,
    data: buildReportData({
      id: r.id,
      created: `2026-03-0${day}T06:00:00.000000Z`,
      high_passed: r.high,
      high_count: 4,
      middle_passed: r.middle,
      middle_count: 8,
      low_passed: r.low,
      low_count: 8,
      total_passed: r.high + r.middle + r.low,
      total_count: 20,
    }),
  });
}

function hex(png: PNG, x: number, y: number): string {
  const i = (png.width * Math.round(y) + Math.round(x)) * 4;
  return `#${[0, 1, 2].map((k) => png.data[i + k].toString(16).padStart(2, '0')).join('')}`;
}

describe('the trend chart in the report mail', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let dir: string;
  let mails: ReceivedMail[];

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    dir = makeTempDir('relay-chart-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    smtp = await startSmtpPeer();
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_FROM: 'Compliance <relay@example.com>', ROUTES_FILE: path.join(dir, 'routes.yaml') },
      { dataDir: path.join(dir, 'data') },
    );
    // One at a time: each report's chart reads the ones stored before it.
    for (const [i, r] of SERIES.entries()) {
      expect((await postWebhook(relay.webhookUrl, body(r, i + 1))).status).toBe(202);
      mails = await smtp.waitFor(2 * (i + 1), 30_000);
    }
  }, 120_000);

  afterAll(async () => {
    await relay?.stop();
    await smtp?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const mailOf = (route: string, reportId: number) =>
    mails.find(
      (m) => m.parsed.headers.get('x-compliance-route') === route && m.parsed.headers.get('x-compliance-report-id') === String(reportId),
    )!;
  /** The mail as sent, its cid: links kept (mailparser turns them into data: URIs by default). */
  const parseKeepingCid = (mail: ReceivedMail): Promise<ParsedMail> => simpleParser(mail.raw, { keepCidLinks: true });

  it('carries an inline PNG whose Content-ID is the HTML image source, 2× its shown size and at most 40 kB', async () => {
    const parsed = await parseKeepingCid(mailOf('team', 104));
    const images = parsed.attachments.filter((a) => a.contentType === 'image/png');
    expect(images).toHaveLength(1);
    const [image] = images;
    expect(image.contentDisposition).toBe('inline');
    expect(image.cid).toEqual(expect.any(String));
    const img = /<img class="trend-chart" src="([^"]+)" width="(\d+)" height="(\d+)" alt="([^"]+)"/.exec(String(parsed.html));
    expect(img).not.toBeNull();
    expect(img![1]).toBe(`cid:${image.cid}`);
    expect([Number(img![2]), Number(img![3])]).toEqual([TREND_CHART_WIDTH, TREND_CHART_HEIGHT]);
    const png = PNG.sync.read(image.content);
    expect([png.width, png.height]).toEqual([2 * TREND_CHART_WIDTH, 2 * TREND_CHART_HEIGHT]);
    expect(image.content.length).toBeLessThanOrEqual(40 * 1024);
    // No plate: transparent around the lines, so a dark mail background shows through.
    expect(png.data[(Math.floor(png.height / 2) * png.width + 2) * 4 + 3]).toBe(0);
  });

  it('says the trend in its alt text: HIGH fell, the others rose, the current report is marked', async () => {
    const parsed = await parseKeepingCid(mailOf('team', 104));
    const alt = /<img class="trend-chart"[^>]* alt="([^"]+)"/.exec(String(parsed.html))![1];
    expect(alt).toContain('over the last 4 reports (101 to 104)');
    expect(alt).toContain('overall rose from 20% to 85%');
    expect(alt).toContain('HIGH fell from 100% to 25%');
    expect(alt).toContain('MIDDLE rose from 0% to 100%');
    expect(alt).toContain('LOW rose from 0% to 100%');
    expect(alt).toContain('Report 104, this one, is marked');
  });

  it('marks the current report: the marker colour at its point (right end, at 85 %), nowhere else', async () => {
    const parsed = await parseKeepingCid(mailOf('team', 104));
    const png = PNG.sync.read(parsed.attachments.find((a) => a.contentType === 'image/png')!.content);
    const plotHeight = TREND_CHART_HEIGHT - TREND_CHART_PLOT.top - TREND_CHART_PLOT.bottom;
    const x = 2 * (TREND_CHART_WIDTH - TREND_CHART_PLOT.right);
    const y = 2 * (TREND_CHART_PLOT.top + (1 - 0.85) * plotHeight);
    // A ring around the point (5 px, 10 at 2×), and the report's id under the axis: nowhere else.
    expect(hex(png, x + 10, y)).toBe(TREND_CHART_MARKER_COLOUR);
    let outside = 0;
    let inside = 0;
    let label = 0;
    for (let py = 0; py < png.height; py++) {
      for (let px = 0; px < png.width; px++) {
        if (hex(png, px, py) !== TREND_CHART_MARKER_COLOUR) continue;
        if (Math.hypot(px - x, py - y) <= 16) inside += 1;
        else if (py > 2 * (TREND_CHART_HEIGHT - TREND_CHART_PLOT.bottom) && px > png.width / 2) label += 1;
        else outside += 1;
      }
    }
    expect(inside).toBeGreaterThan(30);
    expect(label).toBeGreaterThan(10);
    expect(outside).toBe(0);
    // The first report's overall point (20 %, left end) is a plain dot, not the marker.
    expect(hex(png, 2 * TREND_CHART_PLOT.left, 2 * (TREND_CHART_PLOT.top + 0.8 * plotHeight))).not.toBe(TREND_CHART_MARKER_COLOUR);
  });

  it('gives the text part a one-line sparkline of the overall ratio', () => {
    const text = String(mailOf('team', 104).parsed.text);
    // 20 %, 55 %, 80 %, 85 % on the chart's range (0–100 % here, the series spans most of it).
    expect(text).toContain('Pass ratio, last 4 reports (overall, oldest first, 0\u2013100%): ▂▅▇▇ now 85.0%');
    // The first report of the series: one point is not a trend, no chart and no sparkline.
    expect(String(mailOf('team', 101).parsed.text)).not.toContain('Pass ratio, last');
  });

  it('leaves the chart out of a route with chart: false (no image, no section, no sparkline)', () => {
    const quiet = mailOf('quiet', 104).parsed;
    expect(quiet.attachments.filter((a) => a.contentType === 'image/png')).toEqual([]);
    expect(String(quiet.html)).not.toContain('trend-chart');
    expect(String(quiet.text)).not.toContain('Pass ratio, last');
  });

  describe('in Chromium at 375 px', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it.each(['light', 'dark'] as const)('%s: the chart is shown whole, within the screen (screenshot kept)', async (scheme) => {
      // As a mail client shows it: mailparser puts the inline PNG in as a data: URI.
      const html = String(mailOf('team', 104).parsed.html);
      const context = await browser.newContext({ viewport: { width: 375, height: 900 }, colorScheme: scheme });
      try {
        const page = await context.newPage();
        await page.route('**/*', (route) =>
          route.request().url() === PAGE_URL
            ? route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html })
            : route.abort(),
        );
        await page.goto(PAGE_URL, { waitUntil: 'load' });
        const chart = page.locator('img.trend-chart');
        await chart.scrollIntoViewIfNeeded();
        await page.screenshot({ path: path.join(OUT, `report-104-375px-${scheme}.png`), fullPage: true });
        const shown = await chart.evaluate((el) => {
          const img = el as unknown as {
            naturalWidth: number;
            complete: boolean;
            getBoundingClientRect(): { width: number; height: number; right: number };
          };
          const r = img.getBoundingClientRect();
          return { natural: img.naturalWidth, complete: img.complete, width: r.width, height: r.height, right: r.right };
        });
        expect(shown.complete).toBe(true);
        expect(shown.natural).toBe(2 * TREND_CHART_WIDTH);
        expect(shown.width).toBeGreaterThan(250);
        expect(shown.right).toBeLessThanOrEqual(375);
        // Aspect ratio kept when it shrinks to the phone's width.
        expect(shown.height / shown.width).toBeCloseTo(TREND_CHART_HEIGHT / TREND_CHART_WIDTH, 2);
      } finally {
        await context.close();
      }
    });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { sampleInsightViews } from '../../src/compose';
import { buildTrendChart, loadRenderer, TREND_CHART_MAX_REPORTS } from '../../src/mail';
import { CHART_LINES } from '../../src/report';
import { findPackageRoot } from '../../src/shared';
import { launchChromium } from '../helpers/browser';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';

/**
 * Each report mail carries a small chart of pass ratio per severity over the last reports of its
 * series, the current report shaded: an HTML table, a strip per line, no image. A series whose HIGH
 * ratio falls while the others rise goes through the real relay to a real SMTP server, and the mail is
 * opened in Chromium at 375 px, light and dark (screenshots in test-output/mail-chart/), where the
 * markers are found where their ratios put them.
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

interface ShownChart {
  right: number;
  scroll: number;
  strips: { key: string; tops: number[]; current: boolean[]; colour: string }[];
}

/** Where the chart lies on the page: each strip's line, its markers' tops, which cell is shaded, its colour. */
const READ_CHART = `(() => {
  const table = document.querySelector('table.chart');
  const range = document.createRange();
  const strips = [...table.querySelectorAll('tr.chart-strip')].map((tr) => {
    const cells = [...tr.querySelectorAll('td[rowspan]')];
    const tops = cells.map((td) => { range.selectNodeContents(td); return Math.round(range.getBoundingClientRect().top); });
    return { key: tr.className.replace('chart-strip chart-line-', ''), tops, current: cells.map((td) => td.className === 'chart-current'), colour: getComputedStyle(tr).color };
  });
  return { right: table.getBoundingClientRect().right, scroll: document.documentElement.scrollWidth, strips };
})()`;

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

  it('is part of the HTML: a table with a strip per line, no image and no attachment', () => {
    const { html, attachments } = mailOf('team', 104).parsed;
    expect(attachments).toEqual([]);
    expect(String(html)).not.toContain('<img');
    const label = /<table class="chart" title="([^"]+)"/.exec(String(html))![1];
    expect(label).toContain('over the last 4 reports (101 to 104)');
    expect(label).toContain('overall rose from 20% to 85%');
    expect(label).toContain('HIGH fell from 100% to 25%');
    expect(label).toContain('MIDDLE rose from 0% to 100%');
    expect(label).toContain('Report 104, this one, is shaded');
    // Each line's name with its marker shape, in its colour.
    for (const [name, glyph] of [
      ['Overall', '\u25cb'],
      ['HIGH', '\u25cf'],
      ['MIDDLE', '\u25a0'],
      ['LOW', '\u25c6'],
    ]) {
      expect(String(html)).toContain(`${glyph}</span>&nbsp;${name}</td>`);
    }
  });

  it("gives the text part a one-line sparkline of the overall ratio, on the overall strip's range", () => {
    const text = String(mailOf('team', 104).parsed.text);
    // 20 %, 55 %, 80 %, 85 %: the series spans most of 0–100 %.
    expect(text).toContain('Pass ratio, last 4 reports (overall, oldest first, 0\u2013100%): ▂▅▇▇ now 85.0%');
    // The first report of the series: one point is not a trend, no chart and no sparkline.
    expect(String(mailOf('team', 101).parsed.text)).not.toContain('Pass ratio, last');
    expect(String(mailOf('team', 101).parsed.html)).not.toContain('class="chart"');
  });

  it('leaves the chart out of a route with chart: false (no table, no section, no sparkline)', () => {
    const quiet = mailOf('quiet', 104).parsed;
    expect(String(quiet.html)).not.toContain('class="chart"');
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

    it.each(['light', 'dark'] as const)(
      '%s: within the screen, each marker where its ratio puts it, in its colour (screenshot kept)',
      async (scheme) => {
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
          const chart = page.locator('table.chart');
          await chart.scrollIntoViewIfNeeded();
          await page.screenshot({ path: path.join(OUT, `report-104-375px-${scheme}.png`), fullPage: true });
          const shown = await page.evaluate<ShownChart>(READ_CHART);
          expect(shown.right).toBeLessThanOrEqual(375);
          expect(shown.scroll).toBeLessThanOrEqual(375);
          expect(shown.strips.map((s) => s.key)).toEqual(['overall', 'high', 'middle', 'low']);
          const [overall, high, middle] = shown.strips;
          // HIGH fell report after report: each marker lower on the screen than the one before; overall and MIDDLE rose.
          for (let i = 1; i < 4; i++) {
            expect(high.tops[i]).toBeGreaterThan(high.tops[i - 1]);
            expect(overall.tops[i]).toBeLessThan(overall.tops[i - 1]);
          }
          expect(middle.tops[3]).toBeLessThan(middle.tops[0]);
          // Only the current report's column is shaded.
          for (const strip of shown.strips) expect(strip.current).toEqual([false, false, false, true]);
          // The dashboard's colours, lighter ones on a dark background.
          const rgb = (hex: string) => `rgb(${[1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)).join(', ')})`;
          expect(shown.strips.map((s) => s.colour)).toEqual(CHART_LINES.map((l) => rgb(scheme === 'dark' ? l.darkColour : l.colour)));
        } finally {
          await context.close();
        }
      },
    );

    it(`fits ${TREND_CHART_MAX_REPORTS} reports (a digest's most) on a 375 px phone, with overflow-wrap and word-break removed`, async () => {
      const points = Array.from({ length: TREND_CHART_MAX_REPORTS }, (_, i) => ({
        reportId: 100_000 + i,
        at: '2026-03-01T06:00:00Z',
        ratios: { overall: 0.5 + 0.4 * Math.sin(i), HIGH: 0.3 + 0.2 * Math.cos(i), MIDDLE: 0.9, LOW: i % 3 ? 0.7 : null },
      }));
      const chart = { ...buildTrendChart(points), currentText: '90.0%', currentLabel: 'this report' };
      const [view] = await sampleInsightViews({
        mail: { from: 'relay@example.com', timezone: 'UTC' },
        netbox: { url: 'https://netbox.example.com' },
      });
      // As Gmail shows it: no overflow-wrap, no word-break.
      const html = loadRenderer()
        .render({ ...view, chart })
        .html.replace(/(overflow-wrap|word-break):[^;"]*;?/g, '');
      const context = await browser.newContext({ viewport: { width: 375, height: 900 } });
      try {
        const page = await context.newPage();
        await page.setContent(html, { waitUntil: 'load' });
        await page.screenshot({ path: path.join(OUT, `chart-${TREND_CHART_MAX_REPORTS}-reports-375px.png`), fullPage: true });
        const shown = await page.evaluate<ShownChart>(READ_CHART);
        expect(shown.scroll).toBeLessThanOrEqual(375);
        expect(shown.right).toBeLessThanOrEqual(375);
        expect(shown.strips.map((s) => s.tops.length)).toEqual([30, 30, 30, 30]);
      } finally {
        await context.close();
      }
    });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { findPackageRoot } from '../../src/shared';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

/**
 * The mail as a reader sees it: the HTML part of a real mail (relay → SMTP, enriched from a NetBox
 * double, with a trend) opened in headless Chromium (test/helpers/browser.ts) at a desktop client's width and a phone's, in
 * light and dark mode. Screenshots land in test-output/mail-look/ for a human to look at
 * (`report-42-<width>px-<light|dark>.png`, the whole page).
 */

const OUT = path.join(findPackageRoot(), 'test-output', 'mail-look');
const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const PAGE_URL = 'http://mail.invalid/';

// Long names, as real inventories have them: the layout must wrap them, not scroll.
const TESTS = [
  { id: 1, name: 'bgp-sessions-established-with-every-configured-neighbor', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community-is-not-public', severity: 'MIDDLE' as const },
  { id: 3, name: 'ntp-servers-configured', severity: 'LOW' as const },
];

function results(reportFirstId: number, failing: (i: number) => boolean): ResultSpec[] {
  return Array.from({ length: 30 }, (_, i) => ({
    id: reportFirstId + i,
    test: TESTS[i % 3],
    device: { id: 100 + i, name: `core-switch-frankfurt-dc2-rack${String(i).padStart(2, '0')}-unit07.network.example.net` },
    passed: !failing(i),
  }));
}

function body(id: number, day: number, list: ResultSpec[]): Buffer {
  const count = (sev: string) => list.filter((r) => r.test.severity === sev).length;
  const passed = (sev: string) => list.filter((r) => r.test.severity === sev && r.passed).length;
  const created = `2026-03-0${day}T06:00:00.000000Z`;
  return buildBody({
    version: '4.6',
    timestamp: `2026-03-0${day}T06:00:05.000000+00:00`,
    data: buildReportData({
      id,
      created,
      device_count: 30,
      test_count: 3,
      high_passed: passed('HIGH'),
      high_count: count('HIGH'),
      middle_passed: passed('MIDDLE'),
      middle_count: count('MIDDLE'),
      low_passed: passed('LOW'),
      low_count: count('LOW'),
      total_passed: list.filter((r) => r.passed).length,
      total_count: list.length,
      custom_fields: { owner: 'Netzwerk-B\u00fcro <script>alert(1)</script>' },
    }),
  });
}

interface TextContrast {
  text: string;
  ratio: number;
  /** The trend chart's markers: graphics, which WCAG asks 3:1 of (1.4.11), not 4.5:1. */
  graphic: boolean;
  color: string;
  background: string;
}

/**
 * Runs in the page (a string, so this TypeScript needs no DOM types): the WCAG contrast of every
 * visible text node against the background it is painted on, the chart's marker glyphs flagged.
 */
const MEASURE_CONTRAST = `(() => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(',').map((s) => parseFloat(s));
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const channel = (v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4); };
  const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
  const backgroundOf = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return parse(getComputedStyle(document.documentElement).backgroundColor) || { r: 255, g: 255, b: 255, a: 1 };
  };
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = (n.textContent || '').trim();
    if (!text) continue;
    const el = n.parentElement;
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    if (style.visibility === 'hidden' || style.display === 'none' || rect.width === 0 || rect.height === 0) continue;
    const fg = parse(style.color);
    const bg = backgroundOf(el);
    const l = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const graphic = !!el.closest('tr.chart-strip td[rowspan], .chart-name span');
    found.push({ text: text.slice(0, 50), ratio: (l[0] + 0.05) / (l[1] + 0.05), graphic, color: style.color, background: 'rgb(' + bg.r + ', ' + bg.g + ', ' + bg.b + ')' });
  }
  return found;
})()`;

async function measureContrast(page: Page): Promise<TextContrast[]> {
  return page.evaluate<TextContrast[]>(MEASURE_CONTRAST);
}

/** Text below 4.5:1, or a chart marker below 3:1, against what it is painted on. */
function findPoorContrast(found: readonly TextContrast[]): TextContrast[] {
  return found.filter((t) => t.ratio < (t.graphic ? 3 : 4.5));
}

/**
 * Runs in the page: the computed style of the body and of every element in it, keyed by position,
 * tag and class, so two states of one page can be compared. Sizes the layout derives (a cell's
 * resolved width, the page's height) are left out: one element styled differently changes them
 * everywhere, and the differing element already shows in its own properties.
 */
const COMPUTED_STYLES = `(() => {
  const derived = new Set(['width', 'height', 'block-size', 'inline-size', 'transform-origin', 'perspective-origin']);
  return [document.body, ...document.body.querySelectorAll('*')].map((el, i) => {
    const cs = getComputedStyle(el);
    const style = {};
    for (let k = 0; k < cs.length; k++) if (!derived.has(cs[k])) style[cs[k]] = cs.getPropertyValue(cs[k]);
    return { element: i + ' ' + el.tagName.toLowerCase() + '.' + (el.getAttribute('class') || ''), style };
  });
})()`;

interface ElementStyle {
  element: string;
  style: Record<string, string>;
}

/** `element property: before → after` for every property that differs between two snapshots. */
function diffStyles(before: ElementStyle[], after: ElementStyle[]): string[] {
  return before.flatMap((b, i) =>
    Object.keys(b.style)
      .filter((p) => b.style[p] !== after[i]?.style[p])
      .map((p) => `${b.element} ${p}: ${b.style[p]} → ${after[i]?.style[p]}`),
  );
}

describe('the HTML mail in a real browser', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay;
  let browser: Browser;
  let dataDir: string;
  let html: string;

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    dataDir = makeTempDir('relay-look-');
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'ops@example.com',
        MAIL_FROM: 'Compliance <relay@example.com>',
        MAIL_TIMEZONE: 'Europe/Berlin',
        NETBOX_URL: netbox.url,
        NETBOX_TOKEN: TOKEN,
      },
      { dataDir },
    );
    // Two runs: the second one has a trend (newly failing and fixed pairs) to show.
    const first = results(1000, (i) => i % 4 === 0);
    const second = results(2000, (i) => i % 3 === 0 || i === 5);
    netbox.reports.set(41, { id: 41, created: '2026-03-01T06:00:00.000000Z', results: first });
    netbox.reports.set(42, { id: 42, created: '2026-03-02T06:00:00.000000Z', results: second });
    expect((await postWebhook(relay.webhookUrl, body(41, 1, first))).status).toBe(202);
    await smtp.waitFor(1, 30_000);
    expect((await postWebhook(relay.webhookUrl, body(42, 2, second))).status).toBe(202);
    const mails = await smtp.waitFor(2, 30_000);
    html = String(mails[1].parsed.html);
    fs.writeFileSync(path.join(OUT, 'report-42.html'), html);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await smtp?.close();
    await netbox?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Opens the mail the way a client shows it, with every other request recorded and refused. */
  async function open(width: number, colorScheme: 'light' | 'dark'): Promise<{ page: Page; requests: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
    const page = await context.newPage();
    const requests: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      requests.push(url);
      if (url === PAGE_URL) return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html });
      return route.abort();
    });
    await page.goto(PAGE_URL, { waitUntil: 'load' });
    return { page, requests };
  }

  /**
   * Runs in the page: every element whose box reaches past the viewport's right edge (a cell pushed
   * wide by a long name, a URL that does not wrap), plus the document's own scroll width. Nothing in
   * the mail clips (no `overflow`, which Outlook ignores), so every such element counts.
   */
  const FIND_OVERFLOW = `(() => {
    const client = document.documentElement.clientWidth;
    const wide = [...document.body.querySelectorAll('*')]
      .filter((e) => e.getBoundingClientRect().right > client + 0.5)
      .map((e) => e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || '') + ': ' + (e.textContent || '').trim().slice(0, 40));
    return { scroll: document.documentElement.scrollWidth, client, wide };
  })()`;

  const LOOKS = [375, 600, 1024].flatMap((width) => (['light', 'dark'] as const).map((scheme) => [width, scheme] as const));

  it.each(LOOKS)('at %i px in %s mode nothing overflows sideways (screenshot kept)', async (width, scheme) => {
    const { page } = await open(width, scheme);
    try {
      await page.screenshot({ path: path.join(OUT, `report-42-${width}px-${scheme}.png`), fullPage: true });
      const found = await page.evaluate<{ scroll: number; client: number; wide: string[] }>(FIND_OVERFLOW);
      expect(found.wide).toEqual([]);
      expect(found.scroll).toBeLessThanOrEqual(found.client);
    } finally {
      await page.context().close();
    }
  });

  it.each([600, 375])('at %i px: severity bars visible, links present, no remote resource', async (width) => {
    const { page, requests } = await open(width, 'light');
    try {
      const box = (selector: string) =>
        page.evaluate<{ w: number; h: number }[]>(
          `[...document.querySelectorAll('${selector}')].map((e) => ({ w: e.getBoundingClientRect().width, h: e.getBoundingClientRect().height }))`,
        );
      // Overall and the three severities have results: four bars, each really painted.
      const bars = await box('table.bar');
      expect(bars).toHaveLength(4);
      // Every filled part (HIGH is at 0.0 % here, so it has none) is painted too.
      const fills = await box('td[class*="bar-fill"]');
      expect(fills).toHaveLength(3);
      for (const bar of [...bars, ...fills]) {
        expect(bar.w).toBeGreaterThan(0);
        expect(bar.h).toBeGreaterThan(0);
      }
      const links = await page.evaluate<string[]>(`[...document.querySelectorAll('a[href]')].map((a) => a.href)`);
      expect(links).toEqual(
        expect.arrayContaining([`${netbox.url}/plugins/validity/reports/42/`, `${netbox.url}/plugins/validity/test-results/?report_id=42`]),
      );
      // Nothing but the page itself: no image, font or stylesheet fetched from anywhere.
      expect(requests).toEqual([PAGE_URL]);
      // Custom field text is shown escaped, never run.
      expect(await page.evaluate(`document.querySelectorAll('script').length`)).toBe(0);
    } finally {
      await page.context().close();
    }
  });

  it('on a 375 px phone the first screen says the instance, the worst severity, worse than before, and what newly fails', async () => {
    const { page } = await open(375, 'light');
    try {
      // The text a reader sees above the fold (900 px, a tall phone's screen), in reading order.
      const firstScreen = await page.evaluate<string>(`(() => {
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        const seen = [];
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const r = n.parentElement.getBoundingClientRect();
          if (n.textContent.trim() && r.bottom <= window.innerHeight) seen.push(n.textContent.trim());
        }
        return seen.join(' ');
      })()`);
      const host = new URL(netbox.url).host;
      // Text nodes are joined with spaces here, and <wbr> splits a long name into several nodes.
      const compact = firstScreen.replace(/([.:/_-]) /g, '$1');
      expect(compact).toContain(host);
      expect(firstScreen).toContain('10 HIGH-severity results failed, and 1 of lower severity.');
      expect(firstScreen).toMatch(/Worse than report 41: 63\.3% passed, was 73\.3% \(\u221210\.0 pts, \+3 failing\)/);
      expect(firstScreen).toContain('Newly failing:');
      expect(compact).toMatch(/bgp-sessions-established-with-every-configured-neighbor \(7\sdevices\)/);
      // What newly fails is named before the one list of what fails (each failing result once, tagged).
      const order = await page.evaluate<string[]>(
        `[...document.querySelectorAll('p.newly, h2')].map((h) => h.textContent.trim().slice(0, 14))`,
      );
      expect(order[0]).toBe('Newly failing:');
      expect(order.some((h) => h.startsWith('Still failing'))).toBe(false);
      // The banner is painted in the worst failing severity's colour; the Overall bar follows the verdict (worse: red), and HIGH's percentage its own state.
      const colours = await page.evaluate<{ banner: string; overallBar: string; highPercent: string }>(`({
        banner: getComputedStyle(document.querySelector('p.banner')).borderLeftColor,
        overallBar: getComputedStyle(document.querySelector('table.ratios tr td.bar-fill')).backgroundColor,
        highPercent: getComputedStyle(document.querySelectorAll('table.ratios td.ratio-pct')[1]).color,
      })`);
      expect(colours.banner).toBe('rgb(185, 28, 28)');
      expect(colours.overallBar).toBe(colours.banner);
      expect(colours.highPercent).toBe(colours.banner);
    } finally {
      await page.context().close();
    }
  });

  it('at 375 px every device name is shown whole, inside the screen (a long one wraps at its dots and hyphens, never cut)', async () => {
    const { page } = await open(375, 'light');
    try {
      const devices = await page.evaluate<
        { name: string; right: number; client: number }[]
      >(`[...document.querySelectorAll('.device a')].map((e) => ({
        name: e.textContent, right: e.getBoundingClientRect().right, client: document.documentElement.clientWidth,
      }))`);
      expect(devices.length).toBeGreaterThan(5);
      for (const d of devices) {
        expect(d.name).toMatch(/^[\w.-]+$/);
        expect({ name: d.name, inside: d.right <= d.client }).toEqual({ name: d.name, inside: true });
      }
    } finally {
      await page.context().close();
    }
  });

  it.each([600, 375])(
    'at %i px in dark mode, every text is readable (WCAG contrast ≥ 4.5, chart markers ≥ 3) and no border is light',
    async (width) => {
      const { page } = await open(width, 'dark');
      try {
        const texts = await measureContrast(page);
        expect(texts.length).toBeGreaterThan(20);
        expect(texts.filter((t) => t.graphic).length).toBeGreaterThan(4);
        const poor = findPoorContrast(texts);
        expect(poor).toEqual([]);
        // And it is really dark: the card is not left white.
        const card = await page.evaluate(`getComputedStyle(document.querySelector('table.card')).backgroundColor`);
        expect(card).not.toBe('rgb(255, 255, 255)');
        // A light border on a dark card is a bright line across it: every visible border is dark or coloured.
        const light = await page.evaluate<unknown[]>(`[...document.querySelectorAll('*')].flatMap((e) => {
        const cs = getComputedStyle(e);
        return ['Top', 'Right', 'Bottom', 'Left'].filter((side) => parseFloat(cs['border' + side + 'Width']) > 0 && cs['border' + side + 'Style'] !== 'none')
          .map((side) => ({ element: e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || ''), side, color: cs['border' + side + 'Color'] }));
      }).filter((b) => { const p = b.color.match(/\\d+/g).map(Number); return (p[0] + p[1] + p[2]) / 3 > 160; })`);
        expect(light).toEqual([]);
      } finally {
        await page.context().close();
      }
    },
  );

  it('looks the same in a client that drops <style>: every style it needs is inline', async () => {
    const { page } = await open(600, 'light');
    try {
      const before = await page.evaluate<ElementStyle[]>(COMPUTED_STYLES);
      await page.evaluate(`document.querySelectorAll('style').forEach((s) => s.remove())`);
      const after = await page.evaluate<ElementStyle[]>(COMPUTED_STYLES);
      expect(before.length).toBeGreaterThan(100);
      expect(after.map((e) => e.element)).toEqual(before.map((e) => e.element));
      expect(diffStyles(before, after)).toEqual([]);
    } finally {
      await page.context().close();
    }
  });

  it('in light mode too, every text is readable', async () => {
    const { page } = await open(600, 'light');
    try {
      const poor = findPoorContrast(await measureContrast(page));
      expect(poor).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

/**
 * Without NETBOX_URL the mail shows NetBox's paths as text, not links; with a long BASE_PATH they are long
 * unbroken strings, which must wrap inside a phone's width instead of pushing the card wide.
 */
describe('the HTML mail without NETBOX_URL, long NetBox paths, on a phone', () => {
  // One segment with no hyphen or slash for a line to break at: it wraps only because the CSS lets it.
  const BASE_PATH = '/netboxproductionfrankfurtdatacentertwoinventory';
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let browser: Browser;
  let dataDir: string;
  let html: string;

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    smtp = await startSmtpPeer();
    dataDir = makeTempDir('relay-look-relative-');
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'ops@example.com', MAIL_FROM: 'Compliance <relay@example.com>' },
      { dataDir },
    );
    const data = buildReportData({ id: 7, basePath: BASE_PATH, high_passed: 1, high_count: 3, total_passed: 6, total_count: 8 });
    expect((await postWebhook(relay.webhookUrl, buildBody({ version: '4.6', data }))).status).toBe(202);
    const [mail] = await smtp.waitFor(1, 30_000);
    html = String(mail.parsed.html);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await smtp?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['light', 'dark'] as const)('at 375 px in %s mode the paths wrap and nothing overflows sideways', async (scheme) => {
    const context = await browser.newContext({ viewport: { width: 375, height: 900 }, colorScheme: scheme });
    try {
      const page = await context.newPage();
      await page.setContent(html, { waitUntil: 'load' });
      await page.screenshot({ path: path.join(OUT, `report-7-relative-375px-${scheme}.png`), fullPage: true });
      const size = await page.evaluate<{ scroll: number; client: number }>(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      );
      expect(size.scroll).toBeLessThanOrEqual(size.client);
      const text = await page.evaluate<string>('document.body.innerText');
      // Named as "NetBox" (no host to name), and the paths are all there, as text.
      expect(text).toMatch(/^NetBox\n/);
      expect(text).toContain(`${BASE_PATH}/plugins/validity/test-results/?report_id=7&passed=false`);
      expect(await page.evaluate<number>('document.querySelectorAll("a[href]").length')).toBe(0);
    } finally {
      await context.close();
    }
  });
});

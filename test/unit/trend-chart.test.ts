import fs from 'node:fs';
import path from 'node:path';
import { CHART_SERIES } from '../../src/dashboard';
import { simpleParser } from 'mailparser';
import { PNG } from 'pngjs';
import {
  buildSparkline,
  chooseChartRange,
  buildTrendChart,
  describeTrend,
  drawTrendChartPng,
  paintChartInThread,
  embedRawInlineImages,
  buildOutgoingMail,
  stopChartPainter,
  ChartPainterError,
  TREND_CHART_HEIGHT,
  TREND_CHART_LINES,
  TREND_CHART_MAX_BYTES,
  TREND_CHART_WIDTH,
  type TrendChartPoint,
} from '../../src/mail';

const point = (reportId: number, ratios: TrendChartPoint['ratios']): TrendChartPoint => ({
  reportId,
  at: `2026-03-0${reportId % 10}T06:00:00Z`,
  ratios,
});

describe('the trend chart of a report mail', () => {
  it('is a PNG at twice its shown size, with a gap where a report had no results of a severity', () => {
    const chart = buildTrendChart({
      points: [point(1, { overall: 0.5, HIGH: 1 }), point(2, { overall: 0.6, HIGH: null }), point(3, { overall: 0.7, HIGH: 0.5 })],
      currentIndex: 2,
    });
    const png = PNG.sync.read(chart.png);
    expect([png.width, png.height]).toEqual([2 * TREND_CHART_WIDTH, 2 * TREND_CHART_HEIGHT]);
    expect([chart.width, chart.height]).toEqual([TREND_CHART_WIDTH, TREND_CHART_HEIGHT]);
    // No text element in the image: its labels are strokes, so resvg has nothing to shape and no font to load.
    expect(chart.svg).not.toContain('<text');
    // The gap: HIGH's two points stand alone, no line joins them across report 2 (which had no HIGH results).
    const high = TREND_CHART_LINES.find((l) => l.key === 'HIGH')!.colour;
    expect(chart.svg).not.toMatch(new RegExp(`<polyline[^>]*stroke="${high}"`));
    expect(chart.svg.match(new RegExp(`<circle[^>]*fill="${high}"`, 'g'))).toHaveLength(2);
    // The overall line, which has all three, is drawn through them.
    const overall = TREND_CHART_LINES.find((l) => l.key === 'overall')!.colour;
    expect(chart.svg).toMatch(new RegExp(`<polyline points="[^"]*" [^>]*stroke="${overall}"`));
  });

  it('stays within 40 kB even for the most jagged series of 30 reports (MAIL_CHART_REPORTS at its maximum)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    for (const count of [12, 30]) {
      const points = Array.from({ length: count }, (_, i) =>
        point(i, { overall: random(), HIGH: random(), MIDDLE: random(), LOW: random() }),
      );
      const chart = buildTrendChart({ points, currentIndex: count - 1 });
      expect(chart.png.length).toBeLessThanOrEqual(TREND_CHART_MAX_BYTES);
      expect(PNG.sync.read(chart.png).width).toBe(2 * TREND_CHART_WIDTH);
    }
  });

  it('is drawn on the painter thread to the same bytes, the jagged fallback included, several at once', async () => {
    let seed = 11;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const smooth = { points: [point(1, { overall: 0.5, HIGH: 1 }), point(2, { overall: 0.7, HIGH: 0.5 })], currentIndex: 1 };
    const jagged = {
      points: Array.from({ length: 30 }, (_, i) => point(i, { overall: random(), HIGH: random(), MIDDLE: random(), LOW: random() })),
      currentIndex: 29,
    };
    const drawn = await Promise.all([smooth, jagged, smooth].map((series) => drawTrendChartPng(series, paintChartInThread)));
    expect(drawn[0].equals(buildTrendChart(smooth).png)).toBe(true);
    expect(drawn[1].equals(buildTrendChart(jagged).png)).toBe(true);
    expect(drawn[2].equals(drawn[0])).toBe(true);
    expect(drawn[1].length).toBeLessThanOrEqual(TREND_CHART_MAX_BYTES);
    // An SVG resvg cannot read fails that chart alone; the thread goes on drawing.
    await expect(paintChartInThread('<svg', {})).rejects.toThrow('the chart could not be drawn');
    expect((await drawTrendChartPng(smooth, paintChartInThread)).equals(drawn[0])).toBe(true);
  });

  it('fails the charts a stopped painter thread held as ChartPainterError, and paints the next on a new thread', async () => {
    const series = { points: [point(1, { overall: 0.5, HIGH: 1 }), point(2, { overall: 0.7, HIGH: 0.5 })], currentIndex: 1 };
    const expected = buildTrendChart(series).png;
    await stopChartPainter();
    // A new thread is still loading resvg when it is ended: the chart it was given cannot have been painted.
    const held = drawTrendChartPng(series, paintChartInThread);
    await stopChartPainter();
    const error = await held.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChartPainterError);
    expect(error).toMatchObject({ code: 'CHART_PAINTER' });
    expect((await drawTrendChartPng(series, paintChartInThread)).equals(expected)).toBe(true);
  });

  it('never keeps the process alive: the painter thread holds no ref while it waits for charts', async () => {
    const ports = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
    await stopChartPainter();
    const without = ports();
    await drawTrendChartPng({ points: [point(1, { overall: 0.5 })], currentIndex: 0 }, paintChartInThread);
    // A 'message' listener added after unref() refs the worker's port again: that was once the case.
    expect(ports()).toBe(without);
    await stopChartPainter();
  });

  it('says the trend in words: rose, fell, held; severities without results are left out', () => {
    const alt = describeTrend({
      points: [point(7, { overall: 0.5, HIGH: 1, MIDDLE: 0.8 }), point(8, { overall: 0.75, HIGH: 0.5, MIDDLE: 0.802, LOW: null })],
      currentIndex: 1,
    });
    expect(alt).toBe(
      'Pass ratio per severity over the last 2 reports (7 to 8): overall rose from 50% to 75%, HIGH fell from 100% to 50%, MIDDLE held at 80.2%. Report 8, this one, is marked at the right.',
    );
    // A severity first seen in the current report has nothing to compare with.
    expect(describeTrend({ points: [point(1, { overall: 1 }), point(2, { overall: 1, LOW: 0.25 })], currentIndex: 1 })).toContain(
      'overall held at 100%, LOW 25%.',
    );
    expect(describeTrend({ points: [point(3, { overall: 0.9 })], currentIndex: 0 })).toBe(
      'Pass ratio of report 3, the first of its series: overall 90%.',
    );
  });

  it('draws the text sparkline on the scale it is given, a report without results as a space', () => {
    expect(buildSparkline([0, 0.124, 0.125, 0.5, 0.999, 1, null], { low: 0, high: 1 })).toBe('▁▂▂▅██ ');
    // 90.7 → 83.3 → 91.7 → 97.2 on the chart's 80–100 % range: the change shows (on 0–100 % it was █▇██).
    expect(buildSparkline([0.907, 0.833, 0.917, 0.972], { low: 0.8, high: 1 })).toBe('▅▂▅▇');
  });

  it('zooms its y range to the data, on round ticks, at most three intervals', () => {
    const range = (...overall: number[]) => chooseChartRange(overall.map((v) => ({ ratios: { overall: v } })));
    expect(range(0.907, 0.833, 0.917, 0.972)).toEqual({ low: 0.8, high: 1, step: 0.1 });
    expect(range(0.907, 0.872, 0.917, 0.95)).toEqual({ low: 0.85, high: 0.95, step: 0.05 });
    expect(range(0.5, 0.52)).toEqual({ low: 0.5, high: 0.52, step: 0.01 });
    expect(range(1, 1)).toEqual({ low: 0.99, high: 1, step: 0.01 });
    expect(range(0, 1)).toEqual({ low: 0, high: 1, step: 0.25 });
  });

  it('labels its ticks and the report ids, and tells its lines apart by dash and marker shape as well as colour', () => {
    const chart = buildTrendChart({
      points: [
        point(201, { overall: 0.907, HIGH: 0.9, MIDDLE: 0.95, LOW: 0.8 }),
        point(202, { overall: 0.833, HIGH: 0.85, MIDDLE: 0.9, LOW: 0.85 }),
      ],
      currentIndex: 1,
    });
    // The labels are strokes (one path each): a label per tick line and the two report ids.
    expect(
      chart.svg.match(/<path d="M[^"]*" fill="none" stroke="#[0-9a-f]{6}" stroke-width="[\d.]+" stroke-linecap="square"/g)?.length,
    ).toBe(chart.svg.match(/<line /g)!.length + 2);
    // Each line has a marker shape of its own (Overall: its dashes instead).
    expect(TREND_CHART_LINES.map((l) => [l.marker, l.dash])).toEqual([
      ['none', '7 4'],
      ['circle', ''],
      ['square', ''],
      ['diamond', ''],
    ]);
    expect(chart.svg).toMatch(/<rect x="[^"]*" y="[^"]*" width="6.5" height="6.5" fill="#d97706"\/>/);
    expect(chart.svg).toMatch(/<path d="M[^"]*Z" fill="#2563eb"\/>/);
    // No opaque plate: the PNG's corner is transparent, so a dark mail background shows through.
    expect(PNG.sync.read(chart.png).data[3]).toBe(0);
  });

  it('refuses an empty series or a current report outside it', () => {
    expect(() => buildTrendChart({ points: [], currentIndex: 0 })).toThrow(RangeError);
    expect(() => buildTrendChart({ points: [point(1, { overall: 1 })], currentIndex: 1 })).toThrow(RangeError);
  });

  it('shows outside a mail client as a mail client shows it: cid: becomes the same data: URI as mailparser makes', async () => {
    const chart = buildTrendChart({ points: [point(1, { overall: 0.2 }), point(2, { overall: 0.9 })], currentIndex: 1 });
    const cid = 'trend-chart.2.1772776800000@compliance-relay';
    const html = `<p>before</p><img src="cid:${cid}" alt="x"><p>after</p>`;
    const attachments = [
      { filename: 'report-2-failures.csv', content: Buffer.from('device,test\n'), contentType: 'text/csv' },
      { filename: 'report-2-trend.png', content: chart.png, contentType: 'image/png', cid },
    ];
    const { raw } = await buildOutgoingMail({
      from: 'relay@example.com',
      to: ['ops@example.com'],
      cc: [],
      bcc: [],
      subject: 's',
      text: 't',
      html,
      attachments,
      headers: {},
      messageId: '<chart@example.com>',
      date: new Date(0),
    });
    const asClient = String((await simpleParser(raw)).html);
    expect(asClient).toContain('data:image/png;base64,');
    // The preview and the dashboard (both from the kept bytes) match it.
    expect(embedRawInlineImages(html, raw)).toBe(asClient);
    // HTML without cid: links is returned as it is.
    expect(embedRawInlineImages('<p>plain</p>', raw)).toBe('<p>plain</p>');
  });
});

describe('one definition of the chart colours', () => {
  it('the mail legend paints each line in the colour the chart and the dashboard draw it in', () => {
    const html = fs.readFileSync(path.join(__dirname, '../../templates/report/html.hbs'), 'utf8');
    for (const line of TREND_CHART_LINES) {
      const swatch = new RegExp(`\\.swatch-${line.key.toLowerCase()} \\{ background: (#[0-9a-f]{6}); \\}`).exec(html);
      expect({ line: line.key, colour: swatch?.[1] }).toEqual({ line: line.key, colour: line.colour });
    }
    expect(CHART_SERIES.map((s) => s.colour)).toEqual(
      ['HIGH', 'MIDDLE', 'LOW', 'overall'].map((k) => TREND_CHART_LINES.find((l) => l.key === k)!.colour),
    );
  });
});

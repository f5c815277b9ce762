import fs from 'node:fs';
import path from 'node:path';
import { CHART_SERIES } from '../../src/dashboard';
import {
  buildSparkline,
  chooseChartRange,
  buildTrendChart,
  describeTrend,
  TREND_CHART_STRIP_PX,
  type TrendChartPoint,
} from '../../src/mail';
import { CHART_LINES } from '../../src/report';

const point = (reportId: number, ratios: TrendChartPoint['ratios']): TrendChartPoint => ({
  reportId,
  at: `2026-03-0${reportId % 10}T06:00:00Z`,
  ratios,
});

describe('the trend chart of a report mail', () => {
  it('has a strip per line with results, a cell per report, a gap where a report had no results of it', () => {
    const chart = buildTrendChart([
      point(1, { overall: 0.5, HIGH: 1 }),
      point(2, { overall: 0.6, HIGH: null }),
      point(3, { overall: 0.7, HIGH: 0.5 }),
    ]);
    // MIDDLE and LOW had no results in any of them: no strip.
    expect(chart.rows.map((r) => [r.name, r.glyph, r.cells.map((c) => c.glyph).join('|')])).toEqual([
      ['Overall', '\u25cb', '\u25cb|\u25cb|\u25cb'],
      ['HIGH', '\u25cf', '\u25cf||\u25cf'],
    ]);
    expect(chart.rows.flatMap((r) => r.cells.map((c) => c.current))).toEqual([false, false, true, false, false, true]);
    // Every cell is the strip's height, however its marker sits.
    for (const cell of chart.rows.flatMap((r) => r.cells)) expect(cell.top + cell.bottom).toBe(TREND_CHART_STRIP_PX);
    expect([chart.firstId, chart.lastId, chart.columns]).toEqual([1, 3, 4]);
  });

  it('zooms each strip to its own values and labels the range: 83 → 97 % fills its strip, 100 → 50 % fills its own', () => {
    const chart = buildTrendChart([
      point(201, { overall: 0.907, HIGH: 1 }),
      point(202, { overall: 0.833, HIGH: 0.5 }),
      point(203, { overall: 0.972, HIGH: 0.75 }),
    ]);
    const [overall, high] = chart.rows;
    expect([overall.highText, overall.lowText]).toEqual(['100%', '80%']);
    // 80–100 %: 90.7 % just above the middle, 83.3 % near the bottom, 97.2 % near the top.
    expect(overall.cells.map((c) => c.top)).toEqual([14, 25, 4]);
    // 50–100 % on round ticks: 40–100 %, three steps of 20.
    expect([high.highText, high.lowText]).toEqual(['100%', '40%']);
    expect(high.cells.map((c) => c.top)).toEqual([0, 25, 13]);
    // The text sparkline is on the overall strip's range.
    expect([chart.sparkline, chart.rangeText]).toEqual(['\u2585\u2582\u2587', '80\u2013100%']);
  });

  it('keeps a flat line honest: a range of at least one point, so a 0.2-point wobble is a fifth of the strip', () => {
    const chart = buildTrendChart([point(1, { overall: 0.951 }), point(2, { overall: 0.953 })]);
    expect([chart.rows[0].highText, chart.rows[0].lowText]).toEqual(['96%', '95%']);
    const [a, b] = chart.rows[0].cells.map((c) => c.top);
    expect(a - b).toBeLessThanOrEqual(TREND_CHART_STRIP_PX / 5);
  });

  it('says the trend in words: rose, fell, held; severities without results are left out', () => {
    const alt = describeTrend([
      point(7, { overall: 0.5, HIGH: 1, MIDDLE: 0.8 }),
      point(8, { overall: 0.75, HIGH: 0.5, MIDDLE: 0.802, LOW: null }),
    ]);
    expect(alt).toBe(
      'Pass ratio per severity over the last 2 reports (7 to 8): overall rose from 50% to 75%, HIGH fell from 100% to 50%, MIDDLE held at 80.2%. Report 8, this one, is shaded at the right.',
    );
    // A severity first seen in the current report has nothing to compare with.
    expect(describeTrend([point(1, { overall: 1 }), point(2, { overall: 1, LOW: 0.25 })])).toContain('overall held at 100%, LOW 25%.');
    expect(describeTrend([point(3, { overall: 0.9 })])).toBe('Pass ratio of report 3, the first of its series: overall 90%.');
  });

  it('draws the text sparkline on the scale it is given, a report without results as a space', () => {
    expect(buildSparkline([0, 0.124, 0.125, 0.5, 0.999, 1, null], { low: 0, high: 1 })).toBe('▁▂▂▅██ ');
    // 90.7 → 83.3 → 91.7 → 97.2 on the chart's 80–100 % range: the change shows (on 0–100 % it was █▇██).
    expect(buildSparkline([0.907, 0.833, 0.917, 0.972], { low: 0.8, high: 1 })).toBe('▅▂▅▇');
  });

  it('zooms its y range to the data, on round ticks, at most three intervals', () => {
    const range = (...ratios: (number | null)[]) => chooseChartRange(ratios);
    expect(range(0.907, 0.833, 0.917, 0.972)).toEqual({ low: 0.8, high: 1, step: 0.1 });
    expect(range(0.907, 0.872, 0.917, 0.95)).toEqual({ low: 0.85, high: 0.95, step: 0.05 });
    expect(range(0.5, 0.52)).toEqual({ low: 0.5, high: 0.52, step: 0.01 });
    expect(range(1, 1)).toEqual({ low: 0.99, high: 1, step: 0.01 });
    expect(range(0, 1)).toEqual({ low: 0, high: 1, step: 0.25 });
    // A report without results of the line does not count.
    expect(range(null, 0.5, 0.52, null)).toEqual({ low: 0.5, high: 0.52, step: 0.01 });
  });

  it('refuses an empty series', () => {
    expect(() => buildTrendChart([])).toThrow(RangeError);
  });
});
describe('one definition of the chart colours', () => {
  it('the mail paints each line in the colour the dashboard draws it in, and its dark-mode rules in its dark colour', () => {
    const chart = buildTrendChart([point(1, { overall: 0.5, HIGH: 0.5, MIDDLE: 0.5, LOW: 0.5 })]);
    expect(chart.rows.map((r) => r.colour)).toEqual(CHART_LINES.map((l) => l.colour));
    for (const set of ['report', 'digest']) {
      const html = fs.readFileSync(path.join(__dirname, `../../templates/${set}/html.hbs`), 'utf8');
      for (const line of CHART_LINES) {
        const rule = new RegExp(`\\.chart-line-${line.key.toLowerCase()} \\{ color: (#[0-9a-f]{6}) !important; \\}`).exec(html);
        expect({ set, line: line.key, colour: rule?.[1] }).toEqual({ set, line: line.key, colour: line.darkColour });
      }
    }
    expect(CHART_SERIES.map((s) => s.colour)).toEqual(
      ['HIGH', 'MIDDLE', 'LOW', 'overall'].map((k) => CHART_LINES.find((l) => l.key === k)!.colour),
    );
  });
});

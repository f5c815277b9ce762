/**
 * The small pass-ratio chart of a report mail: SVG built here, rasterised on the server by
 * resvg (a Rust renderer whose binary ships inside its npm package; no browser, no chart service, no
 * external URL). Its few labels (percentages, report ids) are drawn as strokes (stroke-text.ts), not
 * text, so no font is loaded and resvg's system-font scan, 30-60 ms per render, never runs; the legend is
 * written in the mail beside it (readable, dark-mode aware, found by a search). The background is
 * transparent and every ink a mid-tone, so the same PNG reads on light and dark mail backgrounds.
 */

import { CHART_LINES } from '../report';
import { deflateRgba, wrapPng } from './encode-png';
import { drawStrokeText, measureStrokeText } from './stroke-text';
import type { PaintChart } from './paint-chart';

/** The chart's lines: the relay's one definition of their colours, dashes and markers (report/chart-lines.ts). */
export const TREND_CHART_LINES = CHART_LINES;

/** The current report's ring and id: a blue that reads on light and dark backgrounds. */
export const TREND_CHART_MARKER_COLOUR = '#3b82f6';

/** CSS pixels; the PNG has {@link TREND_CHART_PIXEL_RATIO} times as many, for sharp phone screens. */
export const TREND_CHART_WIDTH = 360;
export const TREND_CHART_HEIGHT = 160;
export const TREND_CHART_PIXEL_RATIO = 2;

/** The plot area's margins, CSS pixels: room for the y labels on the left and the report ids below. */
export const TREND_CHART_PLOT = { left: 46, right: 14, top: 12, bottom: 28 } as const;
const PAD = TREND_CHART_PLOT;
/** The most a chart's PNG may weigh in a mail. */
export const TREND_CHART_MAX_BYTES = 40 * 1024;
/** resvg's `shapeRendering` values (its ShapeRendering enum). */
const SHAPE_RENDERING_CRISP = 1;
const SHAPE_RENDERING_ANTI_ALIASED = 2;
const SPARK_BARS = '▁▂▃▄▅▆▇█';
/** A change smaller than this (percentage points) reads "held" in the alt text. */
const STEADY_POINTS = 0.5;
/** Labels and grid: a mid grey that reads on a white and on a dark mail background. */
const INK = '#8491a3';
const LABEL_PX = 11;

export type TrendChartLine = (typeof TREND_CHART_LINES)[number]['key'];

/**
 * One report of the series: its pass ratios (0..1), null or absent where it had no results of that
 * severity. `at` (its creation time) is not drawn: points are spaced evenly, oldest on the left.
 */
export interface TrendChartPoint {
  reportId: number;
  at: Date | string;
  ratios: Partial<Record<TrendChartLine, number | null>>;
}

/** The reports to plot, oldest first, and which of them is the current one (marked). */
export interface TrendChartSeries {
  points: readonly TrendChartPoint[];
  currentIndex: number;
}

/** A rendered chart: the PNG (2×) and what a mail needs around it. */
export interface TrendChart {
  png: Buffer;
  /** CSS pixels to show it at (the PNG is {@link pixelRatio} times larger). */
  width: number;
  height: number;
  pixelRatio: number;
  /** The trend in words, for the image's alt text. */
  alt: string;
  /** The overall pass ratio of each report as one line of block characters, on the chart's own scale. */
  sparkline: string;
  /** The chart's y range (ratios), which the sparkline shares. */
  range: ChartRange;
  /** Where the current report's marker is centred, in PNG pixels. */
  marker: { x: number; y: number };
  svg: string;
}

interface ResvgModule {
  Resvg: new (svg: string, options: object) => { render(): { width: number; height: number; pixels: Buffer } };
}
let resvg: ResvgModule | undefined;

/** resvg is loaded at the first chart, not at start: `check-config` and the webhook path never draw one. */
function loadResvg(): ResvgModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  resvg ??= require('@resvg/resvg-js') as ResvgModule;
  return resvg;
}

/**
 * Pass ratio per severity (and overall) across a report series, the current report marked, as a PNG
 * at 2× on its own white plate (so it reads on light and dark mail backgrounds), with its alt text and
 * a text sparkline. Pure apart from the rasteriser; a few milliseconds (see `npm run bench -- --only render`).
 */
export function buildTrendChart(series: TrendChartSeries): TrendChart {
  checkSeries(series);
  const { svg, marker } = buildTrendChartSvg(series);
  const { Resvg } = loadResvg();
  // resvg draws the pixels; they are deflated here (encode-png.ts: ~3× cheaper than resvg's asPng()).
  const draw = (shapeRendering: number) => {
    const image = new Resvg(svg, buildResvgOptions(shapeRendering)).render();
    return wrapPng(image.width, image.height, deflateRgba(image.pixels, image.width, image.height));
  };
  let png = draw(SHAPE_RENDERING_ANTI_ALIASED);
  // Every anti-aliased edge pixel is a colour of its own: a long, jagged series (up to 30 reports) can
  // pass the budget that way, where crisp edges take about a third of the bytes.
  if (png.length > TREND_CHART_MAX_BYTES) png = draw(SHAPE_RENDERING_CRISP);
  return {
    png,
    width: TREND_CHART_WIDTH,
    height: TREND_CHART_HEIGHT,
    pixelRatio: TREND_CHART_PIXEL_RATIO,
    alt: describeTrend(series),
    sparkline: buildSparkline(
      series.points.map((p) => p.ratios.overall ?? null),
      chooseChartRange(series.points),
    ),
    range: chooseChartRange(series.points),
    marker: { x: marker.x * TREND_CHART_PIXEL_RATIO, y: marker.y * TREND_CHART_PIXEL_RATIO },
    svg,
  };
}

/**
 * The chart's PNG alone, drawn by `paint` (the relay passes its painter thread, {@link paintChartInThread}):
 * what a mail attaches, the same bytes as {@link buildTrendChart}'s, without holding the event loop.
 */
export async function drawTrendChartPng(series: TrendChartSeries, paint: PaintChart): Promise<Buffer> {
  checkSeries(series);
  const { svg } = buildTrendChartSvg(series);
  const png = await paint(svg, buildResvgOptions(SHAPE_RENDERING_ANTI_ALIASED));
  // The same fallback as buildTrendChart's (see there).
  return png.length > TREND_CHART_MAX_BYTES ? paint(svg, buildResvgOptions(SHAPE_RENDERING_CRISP)) : png;
}

function checkSeries(series: TrendChartSeries): void {
  if (series.points.length === 0) throw new RangeError('a trend chart needs at least one report');
  if (series.currentIndex < 0 || series.currentIndex >= series.points.length) throw new RangeError('currentIndex is outside the series');
}

/** resvg's options for the chart: 2× zoom, no system fonts (the chart's labels are strokes), the given edges. */
function buildResvgOptions(shapeRendering: number) {
  return { fitTo: { mode: 'zoom' as const, value: TREND_CHART_PIXEL_RATIO }, font: { loadSystemFonts: false }, shapeRendering };
}

/** A y range in ratios (0..1) and its tick step: zoomed to the data, on round percentages. */
export interface ChartRange {
  low: number;
  high: number;
  step: number;
}

/** Tick steps tried, smallest first (ratios: 0.01 is one percentage point). */
const TICK_STEPS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25];
/** At most this many intervals between ticks, so the labels stay apart at phone size. */
const MAX_TICK_INTERVALS = 3;

/**
 * The y range of a series: from its lowest to its highest ratio, widened to round ticks (the smallest
 * step that needs at most three intervals), so an 83 → 97 % swing fills the chart instead of its top
 * sixth. A flat series gets one step around it. The sparkline uses the same range.
 */
export function chooseChartRange(points: readonly Pick<TrendChartPoint, 'ratios'>[]): ChartRange {
  const values = points.flatMap((p) => TREND_CHART_LINES.map((line) => p.ratios[line.key] ?? null)).filter((v): v is number => v !== null);
  if (values.length === 0) return { low: 0, high: 1, step: 0.25 };
  const min = clamp01(Math.min(...values));
  const max = clamp01(Math.max(...values));
  for (const step of TICK_STEPS) {
    let low = Math.floor(min / step + 1e-9) * step;
    let high = Math.ceil(max / step - 1e-9) * step;
    if (high - low < step / 2) {
      if (high + step <= 1 + 1e-9) high += step;
      else low -= step;
    }
    if (Math.round((high - low) / step) <= MAX_TICK_INTERVALS)
      return { low: roundRatio(Math.max(0, low)), high: roundRatio(Math.min(1, high)), step };
  }
  return { low: 0, high: 1, step: 0.25 };
}

/** The chart as SVG (CSS pixels) and where its marker is. */
export function buildTrendChartSvg(series: TrendChartSeries): { svg: string; marker: { x: number; y: number } } {
  const { points, currentIndex } = series;
  const range = chooseChartRange(points);
  const plotW = TREND_CHART_WIDTH - PAD.left - PAD.right;
  const plotH = TREND_CHART_HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => round(PAD.left + (points.length === 1 ? plotW : (i * plotW) / (points.length - 1)));
  const y = (ratio: number) => round(PAD.top + plotH - ((clamp01(ratio) - range.low) / (range.high - range.low)) * plotH);
  const cx = x(currentIndex);
  // Overall first, so the severities draw over its dashes.
  const lines = TREND_CHART_LINES.map((line) =>
    drawLine(
      points.map((p) => p.ratios[line.key] ?? null),
      line,
      x,
      y,
    ),
  ).join('');
  const current = points[currentIndex].ratios;
  const anchor = current.overall ?? current.HIGH ?? current.MIDDLE ?? current.LOW ?? range.low;
  const marker = { x: cx, y: y(anchor) };
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${TREND_CHART_WIDTH}" height="${TREND_CHART_HEIGHT}" viewBox="0 0 ${TREND_CHART_WIDTH} ${TREND_CHART_HEIGHT}">` +
    drawYAxis(range, y) +
    drawXAxis(points, x, currentIndex) +
    lines +
    `<circle cx="${marker.x}" cy="${marker.y}" r="5" fill="none" stroke="${TREND_CHART_MARKER_COLOUR}" stroke-width="2.5"/>` +
    '</svg>';
  return { svg, marker };
}

/** Grid lines at each tick, labelled "85%" on the left. */
function drawYAxis(range: ChartRange, y: (ratio: number) => number): string {
  const ticks: number[] = [];
  for (let v = range.low; v <= range.high + 1e-9; v += range.step) ticks.push(roundRatio(v));
  return ticks
    .map((tick) => {
      const ty = y(tick);
      const label = `${Math.round(tick * 100)}%`;
      return (
        `<line x1="${PAD.left}" x2="${TREND_CHART_WIDTH - PAD.right}" y1="${ty}" y2="${ty}" stroke="${INK}" stroke-width="0.5" shape-rendering="crispEdges"/>` +
        drawStrokeText(label, PAD.left - 6 - measureStrokeText(label, LABEL_PX), ty - LABEL_PX / 2, LABEL_PX, INK)
      );
    })
    .join('');
}

/** Report ids under the axis, the newest always, others where they fit without touching. */
function drawXAxis(points: readonly TrendChartPoint[], x: (i: number) => number, currentIndex: number): string {
  const labels = points.map((p) => `#${p.reportId}`);
  const widest = Math.max(...labels.map((l) => measureStrokeText(l, LABEL_PX))) + 10;
  const spacing = points.length <= 1 ? Infinity : (x(points.length - 1) - x(0)) / (points.length - 1);
  // At most four ids: the newest, and a few before it far enough apart to read.
  const every = Math.max(1, Math.ceil(widest / spacing), Math.ceil((points.length - 1) / 3));
  const top = TREND_CHART_HEIGHT - PAD.bottom + 11;
  return labels
    .map((label, i) => {
      if ((points.length - 1 - i) % every !== 0 && i !== currentIndex) return '';
      const width = measureStrokeText(label, LABEL_PX);
      const left = Math.min(TREND_CHART_WIDTH - 5 - width, Math.max(PAD.left - 8, x(i) - width / 2));
      // The current report's id in the marker's blue, under its ring.
      return drawStrokeText(label, left, top, LABEL_PX, i === currentIndex ? TREND_CHART_MARKER_COLOUR : INK);
    })
    .join('');
}

/** One series: a polyline per run of known values (a report without results of it leaves a gap), its marker on each value. */
function drawLine(
  values: readonly (number | null)[],
  line: (typeof TREND_CHART_LINES)[number],
  x: (i: number) => number,
  y: (ratio: number) => number,
): string {
  const runs: string[][] = [];
  let run: string[] = [];
  values.forEach((value, i) => {
    if (value === null) {
      if (run.length) runs.push(run);
      run = [];
    } else run.push(`${x(i)},${y(value)}`);
  });
  if (run.length) runs.push(run);
  const dash = line.dash ? ` stroke-dasharray="${line.dash}"` : '';
  const width = line.key === 'overall' ? 2 : 2.25;
  const paths = runs
    .filter((r) => r.length > 1)
    .map(
      (r) =>
        `<polyline points="${r.join(' ')}" fill="none" stroke="${line.colour}" stroke-width="${width}" stroke-linejoin="round"${dash}/>`,
    );
  const marks = values.flatMap((value, i) => (value === null ? [] : [drawMarker(line.marker, x(i), y(value), line.colour)]));
  return paths.join('') + marks.join('');
}

/** A line's marker at one point: its shape tells the line apart without its colour. */
function drawMarker(marker: (typeof TREND_CHART_LINES)[number]['marker'], cx: number, cy: number, colour: string): string {
  if (marker === 'circle') return `<circle cx="${cx}" cy="${cy}" r="3.5" fill="${colour}"/>`;
  if (marker === 'square') return `<rect x="${round(cx - 3.25)}" y="${round(cy - 3.25)}" width="6.5" height="6.5" fill="${colour}"/>`;
  if (marker === 'diamond')
    return `<path d="M${cx} ${round(cy - 4.5)}L${round(cx + 4.5)} ${cy}L${cx} ${round(cy + 4.5)}L${round(cx - 4.5)} ${cy}Z" fill="${colour}"/>`;
  return '';
}

/** Overall pass ratios as block characters on `range` (the chart's y range); a report without results is a space. */
export function buildSparkline(values: readonly (number | null)[], range: Pick<ChartRange, 'low' | 'high'>): string {
  const span = range.high - range.low;
  return values
    .map((v) => {
      if (v === null) return ' ';
      const share = span > 0 ? (clamp01(v) - range.low) / span : 1;
      return SPARK_BARS[Math.min(SPARK_BARS.length - 1, Math.max(0, Math.round(share * (SPARK_BARS.length - 1))))];
    })
    .join('');
}

/**
 * The chart in words: for each line, how it moved from its first known value in the window to the
 * current report ("rose from 40 % to 90 %"), and where the current report is.
 */
export function describeTrend(series: TrendChartSeries): string {
  const { points, currentIndex } = series;
  const current = points[currentIndex];
  const count = points.length;
  const head =
    count === 1
      ? `Pass ratio of report ${current.reportId}, the first of its series`
      : `Pass ratio per severity over the last ${count} reports (${points[0].reportId} to ${points[count - 1].reportId})`;
  const parts = TREND_CHART_LINES.flatMap((line) => {
    const now = current.ratios[line.key] ?? null;
    if (now === null) return [];
    const first = points.slice(0, currentIndex).find((p) => (p.ratios[line.key] ?? null) !== null)?.ratios[line.key] ?? null;
    const name = line.key === 'overall' ? 'overall' : line.name;
    if (first === null || first === undefined) return [`${name} ${percent(now)}`];
    const delta = (now - first) * 100;
    if (Math.abs(delta) < STEADY_POINTS) return [`${name} held at ${percent(now)}`];
    return [`${name} ${delta > 0 ? 'rose' : 'fell'} from ${percent(first)} to ${percent(now)}`];
  });
  const body = parts.length ? parts.join(', ') : 'no results';
  const where = count === 1 ? '' : ` Report ${current.reportId}, this one, is marked${currentIndex === count - 1 ? ' at the right' : ''}.`;
  return `${head}: ${body}.${where}`;
}

function percent(ratio: number): string {
  return `${(Math.round(clamp01(ratio) * 1000) / 10).toString()}%`;
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, v));
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}

/** A ratio on whole hundredths of a percent, so 0.85 + 0.05 is 0.9 and not 0.9000000000000001. */
function roundRatio(v: number): number {
  return Math.round(v * 10_000) / 10_000;
}

/**
 * The small pass-ratio chart of a report mail (issue 19): SVG built here, rasterised on the server by
 * resvg (a Rust renderer whose binary ships inside its npm package; no browser, no chart service, no
 * external URL). The PNG holds no text at all: its legend and scale are written in the mail beside it
 * (readable, dark-mode aware, found by a search), so no font is loaded, and resvg's system-font scan,
 * 30-60 ms per render, never runs.
 */

import { deflateRgba, wrapPng } from './encode-png';
import type { PaintChart } from './paint-chart';

/** A series line of the chart, as the mail's severity scale colours it (templates/report/html.hbs `.tone-fill-*`). */
export const TREND_CHART_LINES = [
  { key: 'overall', name: 'Overall', colour: '#374151', dash: '6 4', width: 2.5 },
  { key: 'HIGH', name: 'HIGH', colour: '#b91c1c', dash: '', width: 2 },
  { key: 'MIDDLE', name: 'MIDDLE', colour: '#ea580c', dash: '', width: 2 },
  { key: 'LOW', name: 'LOW', colour: '#ca8a04', dash: '', width: 2 },
] as const;

/** The current report's marker: the mail's link blue, used by no series line. */
export const TREND_CHART_MARKER_COLOUR = '#1d4ed8';

/** CSS pixels; the PNG has {@link TREND_CHART_PIXEL_RATIO} times as many, for sharp phone screens. */
export const TREND_CHART_WIDTH = 480;
export const TREND_CHART_HEIGHT = 132;
export const TREND_CHART_PIXEL_RATIO = 2;

/** The plot area's margins inside the plate, CSS pixels: 100 % is `top`, 0 % is `height - bottom`. */
export const TREND_CHART_PLOT = { left: 14, right: 18, top: 14, bottom: 14 } as const;
const PAD = TREND_CHART_PLOT;
/** The most a chart's PNG may weigh in a mail (issue 19). */
export const TREND_CHART_MAX_BYTES = 40 * 1024;
/** resvg's `shapeRendering` values (its ShapeRendering enum). */
const SHAPE_RENDERING_CRISP = 1;
const SHAPE_RENDERING_ANTI_ALIASED = 2;
const SPARK_BARS = '▁▂▃▄▅▆▇█';
/** A change smaller than this (percentage points) reads "held" in the alt text. */
const STEADY_POINTS = 0.5;

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
  /** The overall pass ratio of each report as one line of block characters (▁ 0 % … █ 100 %), for the text part. */
  sparkline: string;
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
    sparkline: buildSparkline(series.points.map((p) => p.ratios.overall ?? null)),
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

/** resvg's options for the chart: 2× zoom, no system fonts (the chart has no text), the given edges. */
function buildResvgOptions(shapeRendering: number) {
  return { fitTo: { mode: 'zoom' as const, value: TREND_CHART_PIXEL_RATIO }, font: { loadSystemFonts: false }, shapeRendering };
}

/** The chart as SVG (CSS pixels) and where its marker is. No text: see the module comment. */
export function buildTrendChartSvg(series: TrendChartSeries): { svg: string; marker: { x: number; y: number } } {
  const { points, currentIndex } = series;
  const plotW = TREND_CHART_WIDTH - PAD.left - PAD.right;
  const plotH = TREND_CHART_HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => round(PAD.left + (points.length === 1 ? plotW : (i * plotW) / (points.length - 1)));
  const y = (ratio: number) => round(PAD.top + plotH - clamp01(ratio) * plotH);
  const grid = [0, 0.5, 1]
    .map(
      (r) =>
        `<line x1="${PAD.left}" x2="${TREND_CHART_WIDTH - PAD.right}" y1="${y(r)}" y2="${y(r)}" stroke="#d1d5db" stroke-width="1"${r === 0.5 ? ' stroke-dasharray="3 3"' : ''}/>`,
    )
    .join('');
  const cx = x(currentIndex);
  const guide = `<line x1="${cx}" x2="${cx}" y1="${PAD.top - 6}" y2="${TREND_CHART_HEIGHT - PAD.bottom + 6}" stroke="#bfdbfe" stroke-width="6"/>`;
  // Overall first, so the severities draw over its dashes.
  const lines = TREND_CHART_LINES.map((line) => {
    const values = points.map((p) => p.ratios[line.key] ?? null);
    return drawLine(values, line, x, y);
  }).join('');
  const current = points[currentIndex].ratios;
  const anchor = current.overall ?? current.HIGH ?? current.MIDDLE ?? current.LOW ?? 0;
  const marker = { x: cx, y: y(anchor) };
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${TREND_CHART_WIDTH}" height="${TREND_CHART_HEIGHT}" viewBox="0 0 ${TREND_CHART_WIDTH} ${TREND_CHART_HEIGHT}">` +
    `<rect x="0.5" y="0.5" width="${TREND_CHART_WIDTH - 1}" height="${TREND_CHART_HEIGHT - 1}" rx="8" fill="#ffffff" stroke="#d1d5db"/>` +
    guide +
    grid +
    lines +
    `<circle cx="${marker.x}" cy="${marker.y}" r="6" fill="${TREND_CHART_MARKER_COLOUR}" stroke="#ffffff" stroke-width="2"/>` +
    '</svg>';
  return { svg, marker };
}

/** One series: a polyline per run of known values (a report without results of it leaves a gap), a dot on each value. */
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
  const paths = runs
    .filter((r) => r.length > 1)
    .map(
      (r) =>
        `<polyline points="${r.join(' ')}" fill="none" stroke="${line.colour}" stroke-width="${line.width}" stroke-linejoin="round" stroke-linecap="round"${dash}/>`,
    );
  const dots = values.flatMap((value, i) =>
    value === null ? [] : [`<circle cx="${x(i)}" cy="${y(value)}" r="2.5" fill="${line.colour}"/>`],
  );
  return paths.join('') + dots.join('');
}

/** Overall pass ratios as block characters on a fixed 0-100 % scale; a report without results is a space. */
export function buildSparkline(values: readonly (number | null)[]): string {
  return values
    .map((v) => (v === null ? ' ' : SPARK_BARS[Math.min(SPARK_BARS.length - 1, Math.floor(clamp01(v) * SPARK_BARS.length))]))
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

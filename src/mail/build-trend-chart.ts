import { CHART_LINES, type ChartMarker } from '../report';

/** Height of a strip's range, CSS pixels: the marker's top sits between 0 (the range's top) and this. */
export const TREND_CHART_STRIP_PX = 30;
/** Reports a chart shows at most (a digest's period may hold more): more no longer fit a phone's width. */
export const TREND_CHART_MAX_REPORTS = 30;

const SPARK_BARS = '▁▂▃▄▅▆▇█';
/** A change smaller than this (percentage points) reads "held" in the description. */
const STEADY_POINTS = 0.5;
/** The dashboard's marker shapes as characters (Overall, a dashed line there, is a ring). */
const GLYPHS: Record<ChartMarker, string> = { none: '\u25cb', circle: '\u25cf', square: '\u25a0', diamond: '\u25c6' };

/** One report of the series: its pass ratios (0..1), null or absent where it had no results of that severity. */
export type TrendChartPoint = {
  reportId: number;
  at: Date | string;
  ratios: Partial<Record<(typeof CHART_LINES)[number]['key'], number | null>>;
};

/**
 * The pass-ratio chart as data for an HTML table (templates/partials/trend-chart.hbs), reports oldest first: a strip per
 * line, a marker per report placed by its cell's padding. No image: tables and padding every mail client lays out.
 */
export function buildTrendChart(points: readonly TrendChartPoint[]) {
  if (points.length === 0) throw new RangeError('a trend chart needs at least one report');
  const rows = CHART_LINES.flatMap((line) => {
    const values = points.map((p) => p.ratios[line.key] ?? null);
    if (values.every((v) => v === null)) return [];
    const range = chooseChartRange(values);
    const glyph = GLYPHS[line.marker];
    return [
      {
        /** The class (`chart-line-…`) its dark-mode colour hangs on. */
        key: line.key.toLowerCase(),
        name: line.name,
        glyph,
        colour: line.colour,
        highText: formatTick(range.high),
        lowText: formatTick(range.low),
        /** One per report: its marker's padding above and below (they add up to the strip's height). */
        cells: values.map((v, i) => {
          // The marker's distance from the strip's top: the range's top is 0.
          const share = v === null ? 1 : (range.high - clamp01(v)) / (range.high - range.low);
          const top = Math.round(Math.min(1, Math.max(0, share)) * TREND_CHART_STRIP_PX);
          return { top, bottom: TREND_CHART_STRIP_PX - top, glyph: v === null ? '' : glyph, current: i === points.length - 1 };
        }),
      },
    ];
  });
  const overall = points.map((p) => p.ratios.overall ?? null);
  const range = chooseChartRange(overall);
  return {
    reports: points.length,
    /** The range labels' column, then one per report. */
    columns: points.length + 1,
    /** The table's accessible name. */
    alt: describeTrend(points),
    rows,
    firstId: points[0].reportId,
    lastId: points[points.length - 1].reportId,
    sparkline: buildSparkline(overall, range),
    rangeText: `${Math.round(range.low * 100)}\u2013${formatTick(range.high)}`,
  };
}

const formatTick = (ratio: number): string => `${Math.round(ratio * 100)}%`;

/** Tick steps tried, smallest first (ratios: 0.01 is one percentage point). */
const TICK_STEPS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25];
/** At most this many steps between the range's ends, so a change of a fraction of a point stays small. */
const MAX_TICK_INTERVALS = 3;

/**
 * The range of a line's values widened to round ticks (the smallest step that needs at most three intervals), so an
 * 83 → 97 % swing fills the strip and a 0.2-point wobble does not. A flat line gets one step around it.
 */
export function chooseChartRange(ratios: readonly (number | null)[]) {
  const values = ratios.filter((v): v is number => v !== null);
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

/** Overall pass ratios as block characters on `range` (the overall strip's); a report without results is a space. */
export function buildSparkline(values: readonly (number | null)[], range: { low: number; high: number }): string {
  const span = range.high - range.low;
  return values
    .map((v) => {
      if (v === null) return ' ';
      const share = span > 0 ? (clamp01(v) - range.low) / span : 1;
      return SPARK_BARS[Math.min(SPARK_BARS.length - 1, Math.max(0, Math.round(share * (SPARK_BARS.length - 1))))];
    })
    .join('');
}

/** The chart in words: how each line moved over the window ("rose from 40% to 90%"), and where the current report is. */
export function describeTrend(points: readonly TrendChartPoint[]): string {
  const current = points[points.length - 1];
  const count = points.length;
  const head =
    count === 1
      ? `Pass ratio of report ${current.reportId}, the first of its series`
      : `Pass ratio per severity over the last ${count} reports (${points[0].reportId} to ${points[count - 1].reportId})`;
  const parts = CHART_LINES.flatMap((line) => {
    const now = current.ratios[line.key] ?? null;
    if (now === null) return [];
    const first = points.slice(0, -1).find((p) => (p.ratios[line.key] ?? null) !== null)?.ratios[line.key] ?? null;
    const name = line.key === 'overall' ? 'overall' : line.name;
    if (first === null) return [`${name} ${percent(now)}`];
    const delta = (now - first) * 100;
    if (Math.abs(delta) < STEADY_POINTS) return [`${name} held at ${percent(now)}`];
    return [`${name} ${delta > 0 ? 'rose' : 'fell'} from ${percent(first)} to ${percent(now)}`];
  });
  const body = parts.length ? parts.join(', ') : 'no results';
  const where = count === 1 ? '' : ` Report ${current.reportId}, this one, is shaded at the right.`;
  return `${head}: ${body}.${where}`;
}

const percent = (ratio: number): string => `${(Math.round(clamp01(ratio) * 1000) / 10).toString()}%`;

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));

/** A ratio on whole hundredths of a percent, so 0.85 + 0.05 is 0.9 and not 0.9000000000000001. */
const roundRatio = (v: number): number => Math.round(v * 10_000) / 10_000;

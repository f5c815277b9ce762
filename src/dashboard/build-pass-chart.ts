import { CHART_LINES, formatPercent, passPercent, type ReportCounts } from '../report';

/** One stored report as the chart plots it: `when` in tooltips, `day` ("6 Mar") under the axis. */
export interface ChartReport {
  reportId: number;
  createdMs: number;
  deliveryId: number;
  when: string;
  day: string;
  counts: ReportCounts;
}

/** The chart's series, in the colours and dashes of every pass-ratio chart of the relay (report/chart-lines.ts). */
export const CHART_SERIES = (['HIGH', 'MIDDLE', 'LOW', 'overall'] as const).map((key) => {
  const { colour, dash } = CHART_LINES.find((l) => l.key === key)!;
  return { key, name: key === 'overall' ? 'All' : key, colour, dash };
});

const HEIGHT = 260;
const PAD = { left: 44, right: 16, top: 34, bottom: 40 };
/** A generous width per character of an axis label at 11 px, the font size of templates/dashboard/pass-chart.hbs (digits and letters of system-ui). */
const CHAR_WIDTH_PX = 7;
const LABEL_GAP_PX = 10;

/** Wide for a desk, narrow (fewer labels, same font size) for a phone. */
const CHART_LAYOUTS = [
  { width: 760, className: 'pass-chart' },
  { width: 360, className: 'pass-chart-narrow' },
] as const;

/** Which points get a date under the axis: every `step`-th from the newest, no two overlapping, no day repeated. */
function chooseAxisLabels(days: readonly string[], plotWidthPx: number): boolean[] {
  const spacing = days.length <= 1 ? plotWidthPx : plotWidthPx / (days.length - 1);
  const widest = Math.max(0, ...days.map((d) => d.length)) * CHAR_WIDTH_PX + LABEL_GAP_PX;
  const step = Math.max(1, Math.ceil(widest / spacing));
  const shown = days.map((_, i) => (days.length - 1 - i) % step === 0);
  let previous: string | undefined;
  return shown.map((show, i) => {
    if (!show) return false;
    const repeat = days[i] === previous;
    previous = days[i];
    return !repeat;
  });
}

type ChartOptions = { source?: string; emptyText?: string };

export type PassChartView = ReturnType<typeof buildPassChart>;

/** Pass percentage per severity as server-built SVG, wide and narrow; a severity without results leaves a gap, not a fake 0 %. */
export function buildPassChart(reports: readonly ChartReport[], options: ChartOptions = {}) {
  return {
    source: options.source,
    reports: reports.length,
    layouts: CHART_LAYOUTS.map((layout) => buildLayout(reports, layout, options)),
  };
}

function buildLayout(reports: readonly ChartReport[], layout: (typeof CHART_LAYOUTS)[number], options: ChartOptions) {
  const { width: WIDTH, className } = layout;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (reports.length <= 1 ? plotW / 2 : (i * plotW) / (reports.length - 1));
  const y = (percent: number) => PAD.top + plotH - (percent / 100) * plotH;
  const days = reports.map((r) => r.day);
  const labelled = chooseAxisLabels(days, plotW);
  const series = CHART_SERIES.map(({ key, name, colour, dash }) => {
    const segments: string[][] = [[]];
    const dots = reports.flatMap((r, i) => {
      const ratio = r.counts[key];
      const percent = passPercent(ratio.passed, ratio.count);
      if (percent === null) {
        if (segments[segments.length - 1].length > 0) segments.push([]);
        return [];
      }
      const [cx, cy] = [x(i).toFixed(1), y(percent).toFixed(1)];
      segments[segments.length - 1].push(`${cx},${cy}`);
      const shown = { passed: ratio.passed, count: ratio.count, percent: formatPercent(ratio.passed, ratio.count) };
      return [{ x: cx, y: cy, reportId: r.reportId, when: r.when, ...shown }];
    });
    const paths = segments.filter((s) => s.length > 1).map((s) => s.join(' '));
    return { name, colour, dash, paths, dots };
  });
  const legendStep = Math.min(110, (WIDTH - PAD.left) / CHART_SERIES.length);
  return {
    width: WIDTH,
    height: HEIGHT,
    className,
    titleId: options.source === undefined ? `${className}-title` : `${className}-${options.source}-title`,
    grid: [0, 25, 50, 75, 100].map((percent) => ({
      percent,
      x1: PAD.left,
      x2: WIDTH - PAD.right,
      y: y(percent),
      textX: PAD.left - 6,
      textY: y(percent) + 4,
    })),
    days: reports.flatMap((r, i) => (labelled[i] ? [{ day: r.day, x: x(i), y: HEIGHT - PAD.bottom + 16 }] : [])),
    series,
    legend: CHART_SERIES.map((s, i) => ({ ...s, x: PAD.left + i * legendStep })),
    empty: reports.length === 0 ? { x: WIDTH / 2, y: HEIGHT / 2, text: options.emptyText ?? 'No reports stored yet' } : undefined,
  };
}

import { CHART_LINES, formatPercent, passPercent, type ReportCounts } from '../report';
import { html, type SafeHtml } from '../shared';

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
const AXIS_FONT_PX = 11;
/** A generous width per character of an axis label at {@link AXIS_FONT_PX} (digits and letters of system-ui). */
const CHAR_WIDTH_PX = 7;
const LABEL_GAP_PX = 10;

/** Wide for a desk, narrow (fewer labels, same font size) for a phone. */
const CHART_LAYOUTS = {
  wide: { width: 760, className: 'pass-chart' },
  narrow: { width: 360, className: 'pass-chart-narrow' },
} as const;

/**
 * Which points get a date under the axis: every `step`-th from the newest backwards, the step wide
 * enough that no two labels overlap, and a day already shown by the label before it is not repeated.
 */
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

/**
 * Pass percentage per severity across the reports of one NetBox source, as inline SVG built on the server (no script,
 * no CDN), wide and narrow (CSS shows one). A severity with no results in a report leaves a gap in its line rather than a fake 0 %.
 */
export function buildPassChart(reports: readonly ChartReport[], options: ChartOptions = {}): SafeHtml {
  return html`${buildLayout(reports, CHART_LAYOUTS.wide, options)}${buildLayout(reports, CHART_LAYOUTS.narrow, options)}`;
}

function buildLayout(reports: readonly ChartReport[], layout: (typeof CHART_LAYOUTS)['wide' | 'narrow'], options: ChartOptions): SafeHtml {
  const { width: WIDTH, className } = layout;
  const titleId = options.source === undefined ? `${className}-title` : `${className}-${options.source}-title`;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (reports.length <= 1 ? plotW / 2 : (i * plotW) / (reports.length - 1));
  const y = (percent: number) => PAD.top + plotH - (percent / 100) * plotH;
  const grid = [0, 25, 50, 75, 100].map(
    (p) =>
      html`<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(p)}" y2="${y(p)}" stroke="#e5e7e9" /><text x="${PAD.left - 6}" y="${y(p) + 4}" text-anchor="end" font-size="${AXIS_FONT_PX}" fill="#566573">${p}%</text>`,
  );
  const days = reports.map((r) => r.day);
  const labelled = chooseAxisLabels(days, plotW);
  const xLabels = reports.map((r, i) =>
    labelled[i]
      ? html`<text class="axis-day" x="${x(i)}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle" font-size="${AXIS_FONT_PX}" fill="#566573">${r.day}</text>`
      : '',
  );
  const lines = CHART_SERIES.map((series) => {
    const segments: string[][] = [[]];
    const dots = reports.map((r, i) => {
      const ratio = r.counts[series.key];
      const percent = passPercent(ratio.passed, ratio.count);
      if (percent === null) {
        if (segments[segments.length - 1].length > 0) segments.push([]);
        return '';
      }
      segments[segments.length - 1].push(`${x(i).toFixed(1)},${y(percent).toFixed(1)}`);
      return html`<circle cx="${x(i).toFixed(1)}" cy="${y(percent).toFixed(1)}" r="3.5" fill="${series.colour}"><title>${series.name} in report ${r.reportId} (${r.when}): ${ratio.passed}/${ratio.count} passed, ${formatPercent(ratio.passed, ratio.count)}</title></circle>`;
    });
    const paths = segments
      .filter((s) => s.length > 1)
      .map(
        (s) =>
          html`<polyline points="${s.join(' ')}" fill="none" stroke="${series.colour}" stroke-width="2" ${series.dash ? html`stroke-dasharray="${series.dash}"` : ''} />`,
      );
    return html`<g class="series" data-series="${series.name}">${paths}${dots}</g>`;
  });
  const legendStep = Math.min(110, (WIDTH - PAD.left) / CHART_SERIES.length);
  const legend = CHART_SERIES.map(
    (s, i) =>
      html`<g class="legend" transform="translate(${PAD.left + i * legendStep}, 12)"><line x1="0" x2="22" y1="6" y2="6" stroke="${s.colour}" stroke-width="3" ${s.dash ? html`stroke-dasharray="${s.dash}"` : ''} /><text x="28" y="10" font-size="12" fill="#1c2833">${s.name}</text></g>`,
  );
  const empty =
    reports.length === 0
      ? html`<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" font-size="14" fill="#566573">${options.emptyText ?? 'No reports stored yet'}</text>`
      : '';
  const of = options.source === undefined ? '' : ` of ${options.source}`;
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-labelledby="${titleId}" class="${className}"${options.source === undefined ? '' : html` data-chart-source="${options.source}"`}><title id="${titleId}">Pass percentage per severity${of} over the last ${reports.length} reports</title>${grid}${xLabels}${lines}${legend}${empty}</svg>`;
}

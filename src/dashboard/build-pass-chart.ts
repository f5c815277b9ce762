import { formatPercent, passPercent } from '../report';
import { html, type SafeHtml } from './html';

export interface Ratio {
  passed: number;
  count: number;
}

/** One stored report, as the chart plots it (oldest first). */
export interface ChartReport {
  reportId: number;
  deliveryId: number;
  /** Shown under the axis and in tooltips (the report's creation time, formatted). */
  when: string;
  high: Ratio;
  middle: Ratio;
  low: Ratio;
  total: Ratio;
}

export const CHART_SERIES = [
  { key: 'high', name: 'HIGH', colour: '#c0392b', dash: '' },
  { key: 'middle', name: 'MIDDLE', colour: '#d68910', dash: '' },
  { key: 'low', name: 'LOW', colour: '#2471a3', dash: '' },
  { key: 'total', name: 'All', colour: '#566573', dash: '5 4' },
] as const;

const WIDTH = 760;
const HEIGHT = 260;
const PAD = { left: 44, right: 16, top: 34, bottom: 40 };

/**
 * Pass percentage per severity across reports, as inline SVG built on the server: no script, no
 * CDN, readable in any browser (and by a screen reader through its title and the table beside it).
 * A severity with no results in a report leaves a gap in its line rather than a fake 0 %.
 */
export function buildPassChart(reports: readonly ChartReport[]): SafeHtml {
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (reports.length <= 1 ? plotW / 2 : (i * plotW) / (reports.length - 1));
  const y = (percent: number) => PAD.top + plotH - (percent / 100) * plotH;
  const grid = [0, 25, 50, 75, 100].map(
    (p) =>
      html`<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(p)}" y2="${y(p)}" stroke="#e5e7e9" /><text x="${PAD.left - 6}" y="${y(p) + 4}" text-anchor="end" font-size="11" fill="#566573">${p}%</text>`,
  );
  const every = Math.max(1, Math.ceil(reports.length / 12));
  const xLabels = reports.map((r, i) =>
    i % every === 0 || i === reports.length - 1
      ? html`<text x="${x(i)}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle" font-size="11" fill="#566573">#${r.reportId}</text>`
      : '',
  );
  const lines = CHART_SERIES.map((series) => {
    const segments: string[][] = [[]];
    const dots = reports.map((r, i) => {
      const ratio = r[series.key];
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
  const legend = CHART_SERIES.map(
    (s, i) =>
      html`<g transform="translate(${PAD.left + i * 110}, 12)"><line x1="0" x2="22" y1="6" y2="6" stroke="${s.colour}" stroke-width="3" ${s.dash ? html`stroke-dasharray="${s.dash}"` : ''} /><text x="28" y="10" font-size="12" fill="#1c2833">${s.name}</text></g>`,
  );
  const empty =
    reports.length === 0
      ? html`<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" font-size="14" fill="#566573">No reports stored yet</text>`
      : '';
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-labelledby="pass-chart-title" class="pass-chart"><title id="pass-chart-title">Pass percentage per severity over the last ${reports.length} reports</title>${grid}${xLabels}${lines}${legend}${empty}</svg>`;
}

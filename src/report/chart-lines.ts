/**
 * How every pass-ratio chart of the relay draws its lines: the dashboard's and the mail's (and the mail's
 * legend, templates/report/html.hbs `.swatch-*`), so a colour means the same severity everywhere. Each line
 * differs by more than its colour (its marker shape; Overall by its dashes), for readers who cannot tell
 * red from orange, and for a chart printed in grey. Severities are solid: dashed lines cost the mail's
 * chart about a tenth more to draw and compress. The colours are mid-tones that read on white and on a
 * dark mail background alike.
 */
export const CHART_LINES = [
  { key: 'overall', name: 'Overall', colour: '#64748b', dash: '7 4', marker: 'none' },
  { key: 'HIGH', name: 'HIGH', colour: '#dc2626', dash: '', marker: 'circle' },
  { key: 'MIDDLE', name: 'MIDDLE', colour: '#d97706', dash: '', marker: 'square' },
  { key: 'LOW', name: 'LOW', colour: '#2563eb', dash: '', marker: 'diamond' },
] as const;

export type ChartLineKey = (typeof CHART_LINES)[number]['key'];
export type ChartMarker = (typeof CHART_LINES)[number]['marker'];

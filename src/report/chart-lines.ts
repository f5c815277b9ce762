/**
 * How every pass-ratio chart of the relay draws its lines: the dashboard's and the mail's, so a colour
 * means the same severity everywhere. Each line differs by more than its colour (its marker shape;
 * Overall by its dashes on the dashboard, a ring in the mail), for readers who cannot tell red from
 * orange, and for a chart printed in grey. Each reads at 3:1 or more (WCAG's bar for graphics) on white
 * and on the mail's light grey strips; `darkColour` is the same hue lighter, as legible on a dark mail
 * background (the mail's `.chart-line-…` dark-mode rules, templates/report/html.hbs and digest/html.hbs).
 */
export const CHART_LINES = [
  { key: 'overall', name: 'Overall', colour: '#64748b', darkColour: '#94a3b8', dash: '7 4', marker: 'none' },
  { key: 'HIGH', name: 'HIGH', colour: '#dc2626', darkColour: '#f87171', dash: '', marker: 'circle' },
  { key: 'MIDDLE', name: 'MIDDLE', colour: '#b45309', darkColour: '#fbbf24', dash: '', marker: 'square' },
  { key: 'LOW', name: 'LOW', colour: '#2563eb', darkColour: '#60a5fa', dash: '', marker: 'diamond' },
] as const;

export type ChartMarker = (typeof CHART_LINES)[number]['marker'];

/**
 * How every pass-ratio chart draws its lines (dashboard and mail), so a colour means the same severity everywhere. Each
 * line differs by more than its colour (its marker; Overall by its dashes, or a ring in the mail), for readers who cannot
 * tell red from orange and for print in grey. Each reads at 3:1 or more (WCAG's bar for graphics) on white and on the
 * mail's light grey strips; `darkColour` is the same hue lighter, for the templates' dark-mode `.chart-line-…` rules.
 */
export const CHART_LINES = [
  { key: 'overall', name: 'Overall', colour: '#64748b', darkColour: '#94a3b8', dash: '7 4', marker: 'none' },
  { key: 'HIGH', name: 'HIGH', colour: '#dc2626', darkColour: '#f87171', dash: '', marker: 'circle' },
  { key: 'MIDDLE', name: 'MIDDLE', colour: '#b45309', darkColour: '#fbbf24', dash: '', marker: 'square' },
  { key: 'LOW', name: 'LOW', colour: '#2563eb', darkColour: '#60a5fa', dash: '', marker: 'diamond' },
] as const;

export type ChartMarker = (typeof CHART_LINES)[number]['marker'];

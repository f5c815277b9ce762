/**
 * Every chart's lines, one colour per severity everywhere; each also differs by marker or dashes (colour-blind readers, grey
 * print). Each reads at 3:1 (WCAG graphics) on white and the mail's grey; `darkColour`: the same hue for dark mode.
 */
export const CHART_LINES = [
  { key: 'overall', name: 'Overall', colour: '#64748b', darkColour: '#94a3b8', dash: '7 4', marker: 'none' },
  { key: 'HIGH', name: 'HIGH', colour: '#dc2626', darkColour: '#f87171', dash: '', marker: 'circle' },
  { key: 'MIDDLE', name: 'MIDDLE', colour: '#b45309', darkColour: '#fbbf24', dash: '', marker: 'square' },
  { key: 'LOW', name: 'LOW', colour: '#2563eb', darkColour: '#60a5fa', dash: '', marker: 'diamond' },
] as const;

export type ChartMarker = (typeof CHART_LINES)[number]['marker'];

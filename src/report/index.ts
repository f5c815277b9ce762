export { countPerSeverity, SEVERITIES, SEVERITY_ORDER, type Severity, type SeverityCounts } from './severity';
export { formatPercent, formatPercentValue, passPercent, bandOf, type Band } from './percent';
export { buildLinks, buildWebUrl, type ReportLinks } from './build-links';
export { formatDateTime, formatShortDay, startOfDayMs } from './format-date-time';
export { buildNetboxUrl, findNetboxBasePath, parseNetboxBase, type BuildNetboxUrlOptions, type NetboxBase } from './build-netbox-url';
export { CHART_LINES, type ChartLineKey, type ChartMarker } from './chart-lines';

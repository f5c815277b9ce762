export {
  countPerSeverity,
  COUNT_FIELDS,
  COUNT_LINES,
  mapCountLines,
  readCounts,
  writeCounts,
  type CountField,
  SEVERITIES,
  SEVERITY_ORDER,
  type PassCount,
  type ReportCounts,
  type Severity,
  type SeverityCounts,
} from './severity';
export { formatPercent, formatPercentValue, passPercent, bandOf } from './percent';
export { buildLinks, buildWebUrl, type ReportLinks } from './build-links';
export { formatDateTime, formatShortDay, startOfDayMs } from './format-date-time';
export { buildNetboxUrl, findNetboxBasePath, parseNetboxBase, type BuildNetboxUrlOptions } from './build-netbox-url';
export { CHART_LINES, type ChartMarker } from './chart-lines';

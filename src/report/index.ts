export { SEVERITIES, type Severity, type SeverityCounts } from './severity';
export { formatPercent, passPercent, roundHalfEven1, bandOf, NO_RESULTS, type Band } from './percent';
export { buildLinks, absoluteUrl, buildWebUrl, type ReportLinks } from './build-links';
export { formatDateTime, formatShortDay, startOfDayMs } from './format-date-time';
export {
  buildNetboxUrl,
  findNetboxBasePath,
  findNetboxPathProblem,
  parseNetboxBase,
  type BuildNetboxUrlOptions,
  type NetboxBase,
  type NetboxUrlResult,
} from './build-netbox-url';
export { CHART_LINES, type ChartLineKey, type ChartMarker } from './chart-lines';

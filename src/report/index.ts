export * from './severity';
export * from './percent';
export { buildLinks, buildWebUrl, type ReportLinks } from './build-links';
export * from './format-date-time';
export { buildNetboxUrl, findNetboxBasePath, parseNetboxBase, type BuildNetboxUrlOptions } from './build-netbox-url';
export { CHART_LINES, type ChartMarker } from './chart-lines';

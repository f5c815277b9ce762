import { buildNetboxUrl, findNetboxBasePath, findNetboxPathProblem, parseNetboxBase } from '../netbox';
import type { ReportDelivery } from '../webhook';
import type { EnrichmentView, TrendView } from './insights-view';
import { bandOf, formatPercent, passPercent, type Band } from './percent';

export const SEVERITIES = ['HIGH', 'MIDDLE', 'LOW'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One line of the summary: overall or one severity. */
export interface RatioView {
  name: string;
  passed: number;
  failed: number;
  count: number;
  /** "62.5%" or "—". */
  percentText: string;
  /** 0–100 with one decimal, or null when count is 0. */
  percent: number | null;
  /** Width of the bar's filled part in whole percent (0–100), for table cells. */
  barWidth: number;
  band: Band;
  hasResults: boolean;
}

export interface LinksView {
  report: string;
  devices: string;
  results: string;
  failedResults: string;
  resultsApi: string;
  /** True when NETBOX_URL is unset and the links are NetBox's relative paths. */
  relative: boolean;
}

/** Everything a template can use. templates/README.md documents each field. */
export interface ReportView {
  report: { id: number; display: string; deviceCount: number; testCount: number; created: string; customFields: Record<string, unknown> };
  completedAt: string;
  completedAtText: string;
  timezone: string;
  triggeredBy: string | null;
  overall: RatioView;
  severities: RatioView[];
  highFailed: number;
  hasFailures: boolean;
  links: LinksView;
  /** The subject line the default template builds; templates may ignore it. */
  defaultSubject: string;
  /**
   * What failed, from NetBox's results API (see EnrichmentView); null when the relay did not try
   * (a preview, or a caller without NetBox). Always present: templates run in strict mode.
   */
  enrichment: EnrichmentView | null;
  /** The change since the previous report (see TrendView); null when no history is kept. Always present. */
  trend: TrendView | null;
}

export interface ReportViewOptions {
  /** NetBox's base URL; links stay relative without it. */
  netboxUrl?: string;
  timezone: string;
  enrichment?: EnrichmentView | null;
  trend?: TrendView | null;
}

/** Builds the template data for one report delivery. Pure: same input, same view. */
export function buildReportView(delivery: ReportDelivery, options: ReportViewOptions): ReportView {
  const r = delivery.report;
  const ratio = (name: string, passed: number, count: number): RatioView => {
    const percent = passPercent(passed, count);
    return {
      name,
      passed,
      failed: count - passed,
      count,
      percentText: formatPercent(passed, count),
      percent,
      barWidth: percent === null ? 0 : Math.round(percent),
      band: bandOf(percent),
      hasResults: count > 0,
    };
  };
  const severities = [ratio('HIGH', r.high_passed, r.high_count), ratio('MIDDLE', r.middle_passed, r.middle_count), ratio('LOW', r.low_passed, r.low_count)];
  const overall = ratio('Overall', r.total_passed, r.total_count);
  const highFailed = r.high_count - r.high_passed;
  const display = r.display ?? `report-${r.id}`;
  const subjectCore = `Compliance report ${r.id}: ${r.total_passed}/${r.total_count} passed (${overall.percentText})`;
  return {
    report: {
      id: r.id,
      display,
      deviceCount: r.device_count,
      testCount: r.test_count,
      created: r.created,
      customFields: (r.custom_fields ?? {}) as Record<string, unknown>,
    },
    completedAt: delivery.completedAt,
    completedAtText: formatDateTime(delivery.completedAt, options.timezone),
    timezone: options.timezone,
    triggeredBy: delivery.triggeredBy ?? null,
    overall,
    severities,
    highFailed,
    hasFailures: r.total_passed < r.total_count,
    links: buildLinks(r.id, r.url, r.results_url, options.netboxUrl),
    defaultSubject: highFailed > 0 ? `[${highFailed} HIGH failed] ${subjectCore}` : subjectCore,
    enrichment: options.enrichment ?? null,
    trend: options.trend ?? null,
  };
}

/**
 * NetBox serializes the report without a request, so `url` and `results_url` are relative and carry
 * NetBox's BASE_PATH (`/netbox/api/plugins/...`). The web pages share that base path. Each link is
 * http(s) on NETBOX_URL's origin (built by buildNetboxUrl, like the API requests), or, without
 * NETBOX_URL, a clean NetBox path that the templates show as text. A `results_url` that is not a
 * clean path (`javascript:…`, another host) is replaced by the path NetBox itself would have sent.
 */
export function buildLinks(reportId: number, apiUrl: string, resultsApiUrl: string, netboxUrl?: string): LinksView {
  const basePath = netboxBasePath(apiUrl);
  const canonicalResultsApi = `${basePath}/api/plugins/validity/test-results/?report_id=${reportId}`;
  const paths = {
    report: `${basePath}/plugins/validity/reports/${reportId}/`,
    devices: `${basePath}/plugins/validity/reports/${reportId}/devices/`,
    results: `${basePath}/plugins/validity/test-results/?report_id=${reportId}`,
    failedResults: `${basePath}/plugins/validity/test-results/?report_id=${reportId}&passed=false`,
    resultsApi: findNetboxPathProblem(resultsApiUrl) === null ? resultsApiUrl : canonicalResultsApi,
  };
  if (!netboxUrl) return { ...paths, relative: true };
  const absolute = (p: string) => absoluteUrl(p, netboxUrl);
  return {
    report: absolute(paths.report),
    devices: absolute(paths.devices),
    results: absolute(paths.results),
    failedResults: absolute(paths.failedResults),
    resultsApi: absolute(paths.resultsApi),
    relative: false,
  };
}

/**
 * A NetBox path on NETBOX_URL (base path not doubled), built by buildNetboxUrl. A path it refuses
 * never becomes a link elsewhere: NETBOX_URL itself is linked instead.
 */
export function absoluteUrl(path: string, netboxUrl: string): string {
  const base = parseNetboxBase(netboxUrl);
  const built = buildNetboxUrl(base, path);
  return built.ok ? built.url.href : new URL(`${base.basePath}/`, `${base.origin}/`).href;
}

/** NetBox's BASE_PATH as the report's API `url` shows it: `/netbox/api/plugins/...` → `/netbox`, else ''. */
export function netboxBasePath(apiUrl: string): string {
  return findNetboxBasePath(apiUrl);
}

/** A NetBox web page: absolute on NETBOX_URL when it is set, else NetBox's relative path (shown as text). */
export function buildWebUrl(basePath: string, pagePath: string, netboxUrl?: string): string {
  const p = `${basePath}${pagePath}`;
  return netboxUrl ? absoluteUrl(p, netboxUrl) : p;
}

/** "2023-04-12 19:36:37 UTC" in the configured time zone. */
export function formatDateTime(iso: string, timeZone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

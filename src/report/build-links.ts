import { buildNetboxUrl, findNetboxBasePath, findNetboxPathProblem, parseNetboxBase } from './build-netbox-url';

/** Links to a report in NetBox, for mails and the dashboard. */
export type ReportLinks = ReturnType<typeof buildLinks>;

/**
 * NetBox serializes the report without a request, so `url` and `results_url` are relative and carry
 * NetBox's BASE_PATH (`/netbox/api/plugins/...`). The web pages share that base path. Each link is
 * http(s) on NETBOX_URL's origin (built by buildNetboxUrl, like the API requests), or, without
 * NETBOX_URL, a clean NetBox path that the templates show as text. A `results_url` that is not a
 * clean path (`javascript:…`, another host) is replaced by the path NetBox itself would have sent.
 */
export function buildLinks(reportId: number, apiUrl: string, resultsApiUrl: string, netboxUrl?: string) {
  const basePath = findNetboxBasePath(apiUrl);
  const link = (pagePath: string) => buildWebUrl(basePath, pagePath, netboxUrl);
  return {
    report: link(`/plugins/validity/reports/${reportId}/`),
    devices: link(`/plugins/validity/reports/${reportId}/devices/`),
    results: link(`/plugins/validity/test-results/?report_id=${reportId}`),
    failedResults: link(`/plugins/validity/test-results/?report_id=${reportId}&passed=false`),
    resultsApi:
      findNetboxPathProblem(resultsApiUrl) === null
        ? buildWebUrl('', resultsApiUrl, netboxUrl)
        : link(`/api/plugins/validity/test-results/?report_id=${reportId}`),
    /** True when NETBOX_URL is unset and the links are NetBox's relative paths. */
    relative: !netboxUrl,
  };
}

/**
 * A NetBox web page: absolute on NETBOX_URL when it is set (base path not doubled, built by buildNetboxUrl; a
 * path it refuses never becomes a link elsewhere: NETBOX_URL itself is linked instead), else NetBox's relative
 * path (shown as text).
 */
export function buildWebUrl(basePath: string, pagePath: string, netboxUrl?: string): string {
  const path = `${basePath}${pagePath}`;
  if (!netboxUrl) return path;
  const base = parseNetboxBase(netboxUrl);
  const built = buildNetboxUrl(base, path);
  return built.ok ? built.url.href : new URL(`${base.basePath}/`, `${base.origin}/`).href;
}

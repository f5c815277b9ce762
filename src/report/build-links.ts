import { buildNetboxUrl, findNetboxBasePath, findNetboxPathProblem, parseNetboxBase } from './build-netbox-url';

/** Links to a report in NetBox, for mails and the dashboard. */
export type ReportLinks = ReturnType<typeof buildLinks>;

/**
 * `url` and `results_url` arrive relative, with NetBox's BASE_PATH, which the web pages share. Links are on NETBOX_URL's
 * origin, or without it clean paths shown as text; an unclean `results_url` is replaced by the path NetBox would send.
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

/** A NetBox web page on NETBOX_URL (a refused path links NETBOX_URL itself), else NetBox's relative path (shown as text). */
export function buildWebUrl(basePath: string, pagePath: string, netboxUrl?: string): string {
  const path = `${basePath}${pagePath}`;
  if (!netboxUrl) return path;
  const base = parseNetboxBase(netboxUrl);
  const built = buildNetboxUrl(base, path);
  return built.ok ? built.url.href : new URL(`${base.basePath}/`, `${base.origin}/`).href;
}

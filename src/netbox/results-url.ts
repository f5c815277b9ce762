/**
 * A report's `results_url` as its path and its query's parameters (a fragment dropped), so filters can be
 * added while the path stays exactly as the webhook gave it, for the client to check against NETBOX_URL.
 */
export function splitResultsUrl(resultsUrl: string): { path: string; params: URLSearchParams } {
  const cut = resultsUrl.search(/[?#]/);
  const path = cut === -1 ? resultsUrl : resultsUrl.slice(0, cut);
  const query = cut === -1 || resultsUrl[cut] === '#' ? '' : resultsUrl.slice(cut + 1).split('#', 1)[0];
  return { path, params: new URLSearchParams(query) };
}

import { buildListPath, describeTlsFailure, NETBOX_PAGE_SIZE, NetboxError, type NetboxClient, type NetboxErrorCode } from '../netbox';
import { systemClock } from '../shared';
import type { ReportDelivery } from '../webhook';
import { createFailureSummarizer, type FailureSummary } from './summarize-failures';

/** Why the failing results are not in the mail. */
type EnrichmentMissingCode = 'NO_NETBOX_URL' | 'NO_TOKEN' | 'OTHER_NETBOX' | 'RESULTS_DELETED' | NetboxErrorCode;

/** `reason`: one line for the mail, what is missing and why; `detail`: the technical cause, for the log. */
export type Enrichment =
  { status: 'ok'; summary: FailureSummary } | { status: 'missing'; code: EnrichmentMissingCode; reason: string; detail?: string };

/**
 * Summarizes a report's failing results as they stream in, within `budgetMs` (retries included) or a shared `deadline` on
 * the client's clock. Never throws: a failure is `missing` with why; the counts still go out. No `client`: no NETBOX_URL.
 */
export async function enrichReport(
  delivery: ReportDelivery,
  options: { client?: NetboxClient; budgetMs: number; deadline?: number },
): Promise<Enrichment> {
  const report = delivery.report;
  const summarizer = createFailureSummarizer();
  if (delivery.counts.overall.passed === delivery.counts.overall.count) return { status: 'ok', summary: summarizer.finish() };
  if (!options.client) return missing('NO_NETBOX_URL', 'set NETBOX_URL and NETBOX_TOKEN on the relay to see them here.');
  if (!options.client.hasToken)
    return missing('NO_TOKEN', 'set NETBOX_TOKEN (a read-only NetBox API token) on the relay to see them here.');
  const budget = { deadline: options.deadline ?? systemClock.now() + options.budgetMs };
  try {
    // The report first: a 404 says validity deleted it; its creation time proves it is the one announced, not a namesake.
    const found = (await options.client.getJson(report.url, budget)) as { created?: unknown } | null;
    const foundCreated = typeof found?.created === 'string' ? Date.parse(found.created) : Number.NaN;
    if (foundCreated !== Date.parse(report.created)) {
      return missing(
        'OTHER_NETBOX',
        `report ${report.id} on ${options.client.url} is not this report (created ${String(found?.created)}, not ${report.created}); the webhook came from another NetBox.`,
      );
    }
    const failing = buildListPath(report.results_url, { passed: 'false', limit: NETBOX_PAGE_SIZE, omit: 'explanation' });
    const listed = await options.client.streamList(failing, (page) => summarizer.add(page), budget);
    // A run that raises after its webhook deletes its results but keeps its counts: none listed is not "nothing failed".
    if (listed.items === 0)
      return missing(
        'RESULTS_DELETED',
        `validity removed this run's results from NetBox after sending its webhook (the run failed after writing report ${report.id}); the counts above are the webhook's.`,
      );
    return { status: 'ok', summary: summarizer.finish() };
  } catch (error) {
    return describeFailure(error, delivery, options.client, options.budgetMs);
  }
}

function missing(code: EnrichmentMissingCode, why: string, detail?: string): Enrichment {
  return { status: 'missing', code, reason: `Failing tests are not listed: ${why}`, ...(detail === undefined ? {} : { detail }) };
}

function describeFailure(error: unknown, delivery: ReportDelivery, client: NetboxClient, budgetMs: number): Enrichment {
  if (!(error instanceof NetboxError)) {
    const detail = (error as Error)?.message ?? String(error);
    return missing('PROTOCOL', `reading them from NetBox failed (${detail}).`, detail);
  }
  const seconds = Math.round(budgetMs / 100) / 10;
  const said = error.detail ? `: ${error.detail}` : '';
  const reasons: Record<NetboxErrorCode, string> = {
    AUTH: `NetBox refused the relay's token (HTTP ${error.status ?? 403}${said}); check NETBOX_TOKEN.`,
    NOT_FOUND: `NetBox no longer has report ${delivery.report.id} (validity keeps only the newest reports, see its store_reports setting).`,
    UNREACHABLE: describeTlsFailure(error.detail ?? '', '')
      ? `${error.message}.`
      : `NetBox at ${client.url} could not be reached (${error.detail ?? error.message}).`,
    TIMEOUT: `NetBox did not answer within the ${seconds} s allowed.`,
    SERVER: `NetBox answered HTTP ${error.status ?? 500} and kept failing.`,
    PROTOCOL: `NetBox's answer was not what its API sends (${error.message}).`,
    UNSAFE_URL: `the relay ${error.message} (its NetBox token was not sent).`,
  };
  return missing(error.code, reasons[error.code], error.message);
}

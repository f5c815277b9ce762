import { buildFailuresCsv, type Enrichment, type FailureSummary } from '../enrichment';
import type { MailAttachment } from '../mail';
import { buildWebUrl, SEVERITIES } from '../report';
import { pairKey, type PairBadge, type Trend } from '../trend';
import { buildWaiverFormPath } from '../waivers';

// The views below are what the templates read: templates/README.md documents each field.

/** Failing tests a mail lists, the rest counted: a large report's HTML stays well under Gmail's 102 KB clipping size. */
export const MAX_FAILING_TESTS_LISTED = 50;

/** Size cap of the CSV attachment (a route's attach_csv): 5 MB passes the attachment limits of common mail servers. */
export const CSV_ATTACHMENT_MAX_BYTES = 5_000_000;

export interface EnrichmentViewOptions {
  reportId: number;
  basePath: string;
  netboxUrl?: string;
  failedResultsUrl: string;
  maxFailures: number;
  attachment: ReturnType<typeof buildCsvAttachment>['attachment'];
  /** Each listed result carries its badge (new, failing since). */
  trend?: Trend | null;
  /** Pairs (by pairKey) whose waiver ended since the previous report. */
  waiverExpired?: ReadonlySet<string>;
  /** RELAY_URL (no trailing `/`) and the report's source: each listed result links to the dashboard's pre-filled waiver form. */
  waiverForm?: { relayUrl: string; source: string };
}

/** When NetBox could not tell what failed, `available` is false and the lists are empty. */
export type EnrichmentView = ReturnType<typeof buildEnrichmentView>;

const TOP_DEVICES = 10;

export function buildEnrichmentView(enrichment: Enrichment, options: EnrichmentViewOptions) {
  const web = (pagePath: string) => buildWebUrl(options.basePath, pagePath, options.netboxUrl);
  const filtered = (filter: string) => web(`/plugins/validity/test-results/?report_id=${options.reportId}&${filter}&passed=false`);
  const summary: FailureSummary = enrichment.status === 'ok' ? enrichment.summary : { results: [], tests: [], devices: [] };
  const listed = summary.tests.slice(0, options.maxFailures);
  const badges = options.trend?.badges;
  const newByTest = new Map<string, number>();
  for (const r of summary.results) if (badges?.get(pairKey(r))?.kind === 'new') newByTest.set(r.test, (newByTest.get(r.test) ?? 0) + 1);
  const buildTest = (test: FailureSummary['tests'][number]) => {
    const devices = test.firstResults.map((r) => ({
      name: r.device,
      url: web(`/plugins/validity/test-results/${r.ids.result}/`),
      acceptUrl: options.waiverForm
        ? `${options.waiverForm.relayUrl}${buildWaiverFormPath({ source: options.waiverForm.source, test: test.name, device: r.device })}`
        : null,
      waiverExpired: options.waiverExpired?.has(pairKey({ test: test.name, device: r.device })) ?? false,
    }));
    return {
      name: test.name,
      severity: test.severity,
      failingDevices: test.failingDevices,
      devices,
      moreDevices: test.failingDevices - test.firstResults.length,
      resultsUrl: test.testId !== null ? filtered(`test_id=${test.testId}`) : options.failedResultsUrl,
      tagged: tagDevices(test.name, devices, badges, options.trend?.previous?.reportId ?? null),
      newDevices: newByTest.get(test.name) ?? 0,
    };
  };
  // summary.tests is HIGH first, so the groups are in SEVERITIES' order.
  const groups = SEVERITIES.map((severity) => ({
    severity,
    failingResults: summary.tests.filter((t) => t.severity === severity).reduce((n, t) => n + t.failingDevices, 0),
    tests: listed.filter((t) => t.severity === severity).map(buildTest),
  })).filter((group) => group.tests.length > 0);
  const missing = enrichment.status === 'missing' ? enrichment : null;
  return {
    available: !missing,
    missingReason: missing?.reason ?? null,
    missingCode: missing?.code ?? null,
    failingResults: summary.results.length,
    failingTests: summary.tests.length,
    groups,
    moreTests: summary.tests.length - listed.length,
    moreTestsUrl: options.failedResultsUrl,
    // A device with a single failure is already named under its test; the list is for the repeat offenders.
    topDevices: summary.devices
      .filter((d) => d.failures > 1)
      .slice(0, TOP_DEVICES)
      .map((d) => ({
        name: d.name,
        failures: d.failures,
        url: d.deviceId !== null ? filtered(`device_id=${d.deviceId}`) : options.failedResultsUrl,
      })),
    attachment: missing ? null : options.attachment,
  };
}

/** A test's named devices grouped by badge: new first, then not evaluated or not known before, then the longest streak. */
function tagDevices<D extends { name: string }>(
  test: string,
  devices: D[],
  badges: ReadonlyMap<string, PairBadge> | undefined,
  previousReportId: number | null,
): { tag: string; isNew: boolean; devices: D[] }[] {
  if (!badges || badges.size === 0) return devices.length ? [{ tag: '', isNew: false, devices }] : [];
  const groups = new Map<string, { tag: string; isNew: boolean; devices: D[]; order: number }>();
  for (const device of devices) {
    const badge = badges.get(pairKey({ test, device: device.name }));
    const { tag, order } = describeBadge(badge, previousReportId);
    const group = groups.get(tag) ?? { tag, isNew: badge?.kind === 'new', devices: [], order };
    group.devices.push(device);
    groups.set(tag, group);
  }
  return [...groups.values()].sort((a, b) => b.order - a.order).map(({ tag, isNew, devices: named }) => ({ tag, isNew, devices: named }));
}

/** "new", "no result in report 41", "not failing in report 41", or the streak, and where its group goes (highest first). */
function describeBadge(badge: PairBadge | undefined, previousReportId: number | null): { tag: string; order: number } {
  const previous = previousReportId ?? '?';
  if (!badge) return { tag: '', order: 0 };
  if (badge.kind === 'new') return { tag: 'new', order: Number.MAX_SAFE_INTEGER };
  if (badge.kind === 'unseen') return { tag: `no result in report ${previous}`, order: Number.MAX_SAFE_INTEGER - 1 };
  if (badge.kind === 'unknown') return { tag: `not failing in report ${previous}`, order: Number.MAX_SAFE_INTEGER - 2 };
  const tag = `failing since report ${badge.sinceReportId} (${badge.atLeast ? 'at least ' : ''}${badge.reports} in a row)`;
  return { tag, order: badge.reports };
}

/** The CSV of the failing results (a route's attach_csv), as an attachment and as the section's note about it. */
export function buildCsvAttachment(
  enrichment: Enrichment,
  options: Omit<EnrichmentViewOptions, 'attachment'> & { attachCsv: boolean; attachMaxBytes: number },
  suffix: string,
) {
  if (!options.attachCsv || enrichment.status !== 'ok' || enrichment.summary.results.length === 0)
    return { attachments: [] as MailAttachment[], attachment: null };
  const csv = buildFailuresCsv(enrichment.summary.results, {
    maxBytes: options.attachMaxBytes,
    resultUrl: (id) => buildWebUrl(options.basePath, `/plugins/validity/test-results/${id}/`, options.netboxUrl),
  });
  const fileName = `report-${options.reportId}-failures${suffix}.csv`;
  return {
    attachments: [{ filename: fileName, content: csv.content, contentType: 'text/csv; charset=utf-8; header=present' }],
    attachment: {
      fileName,
      rows: csv.rows,
      totalRows: csv.totalRows,
      truncated: csv.truncated,
      note: csv.truncated
        ? `The attached ${fileName} lists the first ${csv.rows} of ${csv.totalRows} failing results: it is capped at ${options.attachMaxBytes} bytes. All of them: ${options.failedResultsUrl}`
        : null,
    },
  };
}

import type { DigestContent, DigestSourceContent } from '../compose';
import { buildReportFacts, buildRoutingTrend, matchCondition, type Condition, type Route, type SourceFacts } from '../routing';
import type { DeliveryRecord, Store } from '../store';
import { buildPeriodTrend, buildReportSnapshot, buildSourceSeriesKey, buildTrend, type ReportSnapshot } from '../trend';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { DigestJob } from './digest-job';

/** What gathering a digest reads. */
export interface DigestSources {
  store: Pick<Store, 'listDeliveries' | 'findReport' | 'findReportBefore'>;
  /** The configured NetBox sources (name, tags and NetBox URL): for conditions, series and silent sources. */
  sources: readonly (SourceFacts & { netboxUrl?: string })[];
}

/** Rows read per page of the period's deliveries. */
const PAGE_SIZE = 500;

/**
 * Gathers a digest from the store: every report received in the job's period that matches the route
 * (its conditions decided on the report's facts and on its trend against the report before it, as a
 * per-report route decides), grouped by NetBox source and series, with each series' period trend.
 * Reads only what the store keeps, so the same period gives the same digest on a retry, on another
 * replica and in `preview --digest`.
 */
export async function collectDigest(deps: DigestSources, route: Route, job: DigestJob, timezone: string): Promise<DigestContent> {
  const received = await listPeriodReports(deps.store, job);
  const bySource = new Map<string, Map<string, ReportSnapshot[]>>();
  for (const record of received) {
    const snapshot = await findSnapshot(deps, record);
    if (route.match && !(await matchesRoute(deps, route.match, record, snapshot))) continue;
    const series = bySource.get(record.netboxSource) ?? new Map<string, ReportSnapshot[]>();
    series.set(snapshot.series, [...(series.get(snapshot.series) ?? []), snapshot]);
    bySource.set(record.netboxSource, series);
  }
  const sources: DigestSourceContent[] = [];
  for (const [source, seriesMap] of [...bySource].sort(([a], [b]) => a.localeCompare(b))) {
    const series = [];
    for (const [, reports] of [...seriesMap].sort(([a], [b]) => a.localeCompare(b))) {
      const first = reports.reduce((a, b) =>
        b.createdMs < a.createdMs || (b.createdMs === a.createdMs && b.reportId < a.reportId) ? b : a,
      );
      series.push(buildPeriodTrend(reports, await deps.store.findReportBefore(first.series, first)));
    }
    sources.push({ source, series });
  }
  const heard = new Set(received.map((r) => r.netboxSource));
  const watched = namedSources(route.match);
  const silentSources = deps.sources.map((s) => s.name).filter((name) => !heard.has(name) && (!watched || watched.has(name)));
  return { ...job, timezone, sources, silentSources };
}

/** The period's report deliveries (not the watchdog's or the digests' own records), oldest first. */
async function listPeriodReports(store: DigestSources['store'], job: DigestJob): Promise<DeliveryRecord[]> {
  const rows: DeliveryRecord[] = [];
  let beforeId: number | undefined;
  for (;;) {
    const page = await store.listDeliveries({ receivedFrom: job.periodStart, receivedBefore: job.periodEnd, limit: PAGE_SIZE, beforeId });
    rows.push(...page.filter((r) => r.report !== null));
    if (page.length < PAGE_SIZE) break;
    beforeId = page[page.length - 1].id;
  }
  return rows.reverse();
}

/**
 * The report as its mail recorded it (with its failing pairs when NetBox answered); a report whose
 * mail was not composed yet gets its counts only, in the series the composer would give it.
 */
async function findSnapshot(deps: DigestSources, record: DeliveryRecord): Promise<ReportSnapshot> {
  const stored = await deps.store.findReport(record.dedupKey);
  if (stored) return stored;
  const source = deps.sources.find((s) => s.name === record.netboxSource);
  const series = buildSourceSeriesKey({
    source: record.netboxSource === DEFAULT_SOURCE_NAME ? undefined : record.netboxSource,
    netboxUrl: source?.netboxUrl,
    reportUrl: record.report!.report.url,
  });
  return buildReportSnapshot(record.report!, series, null);
}

async function matchesRoute(deps: DigestSources, condition: Condition, record: DeliveryRecord, snapshot: ReportSnapshot): Promise<boolean> {
  const source = deps.sources.find((s) => s.name === record.netboxSource);
  const facts = buildReportFacts(record.report!, { name: record.netboxSource, tags: source?.tags ?? {} });
  const previous = await deps.store.findReportBefore(snapshot.series, snapshot);
  return matchCondition(condition, facts, buildRoutingTrend(buildTrend(snapshot, previous ? [previous] : []), facts));
}

/**
 * The sources a condition restricts a route to (`source: …`, alone or in an `all`), or undefined when
 * any source may match: a source the route never covers is not reported silent in its digest.
 */
function namedSources(condition: Condition | undefined): Set<string> | undefined {
  if (!condition) return undefined;
  if (condition.source) return new Set(condition.source);
  if (condition.all) {
    const named = condition.all.map(namedSources).filter((s): s is Set<string> => s !== undefined);
    if (named.length === 0) return undefined;
    return new Set([...named[0]].filter((name) => named.every((s) => s.has(name))));
  }
  return undefined;
}

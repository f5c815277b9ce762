import { buildDigestMail, UnreadableDeliveryError, type ComposedNotice, type DigestContent } from '../compose';
import type { Renderer } from '../mail';
import { buildReportFacts, matchCondition, type Condition, type Route, type SourceFacts } from '../routing';
import { compareNames, type Clock, type Logger } from '../shared';
import { parseJobDelivery, readReport, type DeliveryRecord, type DigestJob, type Store } from '../store';
import {
  buildPeriodPoint,
  buildPeriodTrend,
  buildReportSnapshot,
  buildSourceSeriesKey,
  buildTrend,
  compareReportOrder,
  pairKey,
  type PeriodPoint,
  type ReportSnapshot,
} from '../trend';
import { applyWaivers, type Waiver } from '../waivers';

export interface DigestSources {
  store: Pick<Store, 'listDeliveries' | 'findReport' | 'findReportBefore'>;
  /** The configured NetBox sources (name, tags and NetBox URL): for conditions, series and silent sources. */
  sources: readonly (SourceFacts & { netboxUrl?: string })[];
  /** Every waiver of a source (the waiver book's list): a digest counts the accepted exceptions apart. Absent: none. */
  waivers?: (source: string) => Promise<Waiver[]>;
}

const PAGE_SIZE = 500;

/** Series shown whole (section and chart) in a digest: the worst; the others get one table row each. */
export const MAX_DIGEST_SERIES = 20;

/**
 * Gathers the period's reports matching the route, by source and series, with each series' trend. Only the store is
 * read, so a retry, another replica and `preview --digest` give the same digest.
 */
export async function collectDigest(deps: DigestSources, route: Route, job: DigestJob, timezone: string): Promise<DigestContent> {
  const received = await listPeriodReports(deps.store, job);
  const tallies = await tallySeries(deps, route, received);
  // The worst series first; a tie by name, so the same period always gives the same digest.
  const ranked = [...tallies.values()].sort(
    (a, b) =>
      b.latest.failed.overall - a.latest.failed.overall ||
      (a.latest.ratios.overall ?? 100) - (b.latest.ratios.overall ?? 100) ||
      compareNames(a.source, b.source) ||
      compareNames(a.series, b.series),
  );
  const detailed = ranked.slice(0, MAX_DIGEST_SERIES);
  const sources: DigestContent['sources'] = [];
  for (const source of [...new Set(detailed.map((t) => t.source))].sort(compareNames)) {
    const series = [];
    for (const tally of detailed.filter((t) => t.source === source).sort((a, b) => compareNames(a.series, b.series))) {
      // Read again for the few series shown whole: the period's snapshots are never all held at once.
      const reports: ReportSnapshot[] = [];
      for (const record of tally.records) reports.push(await findSnapshot(deps, record));
      reports.sort(compareReportOrder);
      const [first, latest] = [reports[0], reports[reports.length - 1]];
      series.push(
        buildPeriodTrend(reports, await deps.store.findReportBefore(first.series, first), await findWaived(deps, source, latest, job)),
      );
    }
    sources.push({ source, series });
  }
  const otherSeries = ranked
    .slice(MAX_DIGEST_SERIES)
    .map((t) => ({ source: t.source, series: t.series, reportCount: t.records.length, latest: t.latest }));
  const heard = new Set(received.map((r) => r.source));
  const watched = namedSources(route.match);
  const silentSources = deps.sources.map((s) => s.name).filter((name) => !heard.has(name) && (!watched || watched.has(name)));
  return { ...job, timezone, sources, otherSeries, silentSources };
}

export interface DigestMailSettings extends DigestSources {
  renderer: Renderer;
  routes: readonly Route[];
  from: string;
  /** MAIL_TIMEZONE: the zone of a digest route without its own. */
  defaultTimezone: string;
  clock: Clock;
}

/** The composer of digests: a digest job becomes its route's digest mail, gathered from the store when it is composed. */
export function createDigestComposer(settings: DigestMailSettings): (delivery: DeliveryRecord, log?: Logger) => Promise<ComposedNotice> {
  return async (delivery) => {
    const stored = parseJobDelivery(delivery.dedupKey, delivery.body!);
    if (stored?.kind !== 'digest') throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a digest job`);
    const { job } = stored;
    const route = settings.routes.find((r) => r.name === job.route && r.digest);
    // A route removed (or no longer a digest) since the period was queued has no recipients to mail.
    if (!route) throw new UnreadableDeliveryError(`digest route ${job.route} is no longer in the routes file`);
    const content = await collectDigest(settings, route, job, route.digest!.timezone ?? settings.defaultTimezone);
    return {
      kind: 'notice',
      route: route.name,
      reason: `digest of ${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}${job.late ? ' (late)' : ''}`,
      message: await buildDigestMail(content, route, { ...settings, delivery, date: new Date(settings.clock.now()) }),
    };
  };
}

/** The latest report's pairs that are accepted exceptions at the period's end (so a retry counts the same). */
async function findWaived(deps: DigestSources, source: string, latest: ReportSnapshot, job: DigestJob): Promise<Set<string>> {
  if (!deps.waivers || !latest.failing) return new Set();
  const outcome = applyWaivers(latest.failing, await deps.waivers(source), job.periodEnd - 1);
  return new Set(outcome.waived.map((m) => pairKey(m.pair)));
}

/** The period's matching reports by series: each series' latest report and its records (snapshots are dropped as read). */
async function tallySeries(deps: DigestSources, route: Route, received: readonly DeliveryRecord[]) {
  const tallies = new Map<string, { source: string; series: string; latest: PeriodPoint; records: DeliveryRecord[] }>();
  for (const record of received) {
    const snapshot = await findSnapshot(deps, record);
    if (route.match) {
      const tags = deps.sources.find((s) => s.name === record.source)?.tags ?? {};
      const facts = buildReportFacts(readReport(record)!, { name: record.source, tags });
      const previous = await deps.store.findReportBefore(snapshot.series, snapshot);
      if (!matchCondition(route.match, facts, buildTrend(snapshot, previous ? [previous] : []))) continue;
    }
    const key = `${record.source}\n${snapshot.series}`;
    const point = buildPeriodPoint(snapshot);
    const tally = tallies.get(key);
    if (!tally) tallies.set(key, { source: record.source, series: snapshot.series, latest: point, records: [record] });
    else {
      tally.records.push(record);
      if (compareReportOrder(point, tally.latest) > 0) tally.latest = point;
    }
  }
  return tallies;
}

/** The period's report deliveries (not the watchdog's or the digests' own records), oldest first. */
async function listPeriodReports(store: DigestSources['store'], job: DigestJob): Promise<DeliveryRecord[]> {
  const rows: DeliveryRecord[] = [];
  let beforeId: number | undefined;
  for (;;) {
    const page = await store.listDeliveries({ receivedFrom: job.periodStart, receivedBefore: job.periodEnd, limit: PAGE_SIZE, beforeId });
    rows.push(...page.filter((r) => readReport(r)));
    if (page.length < PAGE_SIZE) break;
    beforeId = page[page.length - 1].id;
  }
  return rows.reverse();
}

/** The report as its mail recorded it; one whose mail was not composed yet: its counts, in the series the composer would give it. */
async function findSnapshot(deps: DigestSources, record: DeliveryRecord): Promise<ReportSnapshot> {
  const stored = await deps.store.findReport(record.dedupKey);
  if (stored) return stored;
  const source = deps.sources.find((s) => s.name === record.source);
  const series = buildSourceSeriesKey({ source: record.source, netboxUrl: source?.netboxUrl, reportUrl: record.report!.url });
  return buildReportSnapshot(readReport(record)!, series, null);
}

/** The sources a condition restricts a route to (`source: …`, alone or in an `all`): the others are not reported silent. */
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

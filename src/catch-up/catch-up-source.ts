import { buildListPath, NetboxError, readNetboxStatus, type NetboxClient, type RequestBudget } from '../netbox';
import { RelayError, type Logger } from '../shared';
import { buildJobDelivery, buildNewDelivery, type CatchUpState, type MissedReportsNotice, type NewDelivery, type Store } from '../store';
import { compareReportOrder, type ReportCursor } from '../trend';
import { buildDedupKey, DEFAULT_SOURCE_NAME, normalizeTimestamp, parseDelivery } from '../webhook';

export interface SourceCatchUpContext {
  source: string;
  /** The source's NETBOX_URL as configured: a report's series is keyed by it, as its webhook's is. */
  netboxUrl?: string;
  client: NetboxClient;
  store: Pick<Store, 'newestStoredReport' | 'listStoredReportIds' | 'findKnownKeys' | 'insertDelivery'>;
  logger: Logger;
  /** Missed reports mailed one by one (the source's `catchUp.max`); older ones are named in the notice. */
  max: number;
  now: number;
  budget: RequestBudget;
  onQueued?: (id: number) => void;
}

/** Gaps in NetBox's ids wider than this are not named one by one (a NetBox restored from elsewhere, say). */
const MAX_GAP_IDS = 1_000;

/**
 * Queues, oldest first as its webhook would, every report NetBox lists after the newest seen that the outbox lacks: the
 * newest `max` mailed one by one, older and deleted ones named in one notice. A first catch-up starts at the newest
 * report received (or NetBox's). Resolves with how many were queued, and where the next one starts.
 */
export async function catchUpSource(state: CatchUpState, context: SourceCatchUpContext): Promise<{ queued: number; seen: ReportCursor }> {
  const received = state.seen ? undefined : await context.store.newestStoredReport(context.source);
  const after =
    state.seen ??
    (received ? { createdMs: Date.parse(normalizeTimestamp(received.created) ?? received.created), reportId: received.reportId } : null);
  const newer = await listNewerReports(context.client, after, context.budget);
  const newest = newer.at(-1);
  const seen = newest ? { createdMs: newest.createdMs, reportId: newest.reportId } : (after ?? { createdMs: 0, reportId: 0 });
  if (!after) {
    context.logger.info(
      { source: context.source, reportId: newest?.reportId ?? null },
      newest
        ? `catch-up starts at NetBox's newest report ${newest.reportId}: older reports are not mailed`
        : 'catch-up starts with NetBox holding no report: every report from now on is mailed',
    );
    return { queued: 0, seen };
  }
  if (!newest) return { queued: 0, seen };
  const stored = new Set(await context.store.listStoredReportIds(context.source, after.reportId, maxId(newer)));
  const keyOf = (r: ListedReport) => buildDedupKey(r.reportId, r.created, context.source);
  const known = new Set(await context.store.findKnownKeys(newer.map(keyOf)));
  // The newest `max` listed after the last seen (a rerun picks the same), less those whose webhook came.
  const notStored = (r: ListedReport) => !stored.has(r.reportId) && !known.has(keyOf(r));
  const toMail = newer.slice(-context.max).filter(notStored);
  const skipped = newer.slice(0, Math.max(0, newer.length - context.max)).filter(notStored);
  const fetched = await queueMissedReports(toMail, context);
  const deleted = [...findVanishedIds(after, newer, stored), ...fetched.deleted];
  if (skipped.length > 0 || deleted.length > 0 || fetched.refused.length > 0)
    await queueNotice(context, { mailed: fetched.mailed, skipped, deleted, refused: fetched.refused });
  return { queued: fetched.queued, seen };
}

/** Fetches and queues each report, oldest first: how many were queued, and the ids NetBox no longer had or served refused. */
async function queueMissedReports(reports: readonly ListedReport[], context: SourceCatchUpContext) {
  const { logger, source } = context;
  const found = { queued: 0, mailed: 0, deleted: [] as number[], refused: [] as number[] };
  for (const report of reports) {
    const delivery = await fetchMissedReport(report.reportId, context);
    if (delivery === 'deleted') {
      found.deleted.push(report.reportId);
      continue;
    }
    if ('refused' in delivery) {
      // Retrying cannot help (NetBox serves it so each time): named in the notice instead of blocking the source.
      found.refused.push(report.reportId);
      logger.warn(
        { source, reportId: report.reportId, reason: delivery.refused },
        'missed report refused: its fields fail the checks a webhook must pass',
      );
      continue;
    }
    found.mailed += 1;
    const result = await context.store.insertDelivery(delivery);
    if (result.duplicate) continue;
    found.queued += 1;
    logger.info(
      { source, reportId: report.reportId, deliveryId: result.id },
      'missed report queued: fetched from NetBox because its webhook never arrived',
    );
    context.onQueued?.(result.id);
  }
  return found;
}

function maxId(reports: readonly ListedReport[]): number {
  return reports.reduce((m, r) => Math.max(m, r.reportId), 0);
}

/** Ids between the last seen and the newest listed that NetBox no longer lists nor the outbox held: ids grow, so these are gone. */
function findVanishedIds(after: ReportCursor, newer: readonly ListedReport[], stored: ReadonlySet<number>): number[] {
  const top = maxId(newer);
  if (after.reportId === 0 || top - after.reportId > MAX_GAP_IDS) return [];
  const listed = new Set(newer.map((r) => r.reportId));
  const vanished: number[] = [];
  for (let id = after.reportId + 1; id < top; id += 1) if (!listed.has(id) && !stored.has(id)) vanished.push(id);
  return vanished;
}

async function queueNotice(
  context: SourceCatchUpContext,
  found: { mailed: number; skipped: ListedReport[]; deleted: number[]; refused: number[] },
): Promise<void> {
  const base = context.client.url;
  const notice: MissedReportsNotice = {
    kind: 'missed',
    ...(context.source === DEFAULT_SOURCE_NAME ? {} : { source: context.source }),
    detectedAt: context.now,
    mailed: found.mailed,
    skipped: found.skipped.map((r) => ({ id: r.reportId, created: r.created, link: `${base}/plugins/validity/reports/${r.reportId}/` })),
    deleted: [...found.deleted].sort((a, b) => a - b),
    refused: found.refused,
  };
  const result = await context.store.insertDelivery(buildJobDelivery({ kind: 'missed', notice }));
  if (result.duplicate) return;
  context.logger.warn(
    { source: context.source, skipped: notice.skipped.length, deleted: notice.deleted, deliveryId: result.id },
    'missed reports not mailed one by one (beyond the newest mailed, or deleted in NetBox): one notice names them',
  );
  context.onQueued?.(result.id);
}

const REPORTS_PATH = '/api/plugins/validity/reports/';

/** A report as the list names it, its place in NetBox's order; `created` as NetBox serializes it (with the id: its dedup key). */
type ListedReport = ReportCursor & { created: string };

/**
 * The reports after `after`, oldest first: validity ≥ 3.0 filters by creation; older validity lists newest first until
 * one at or before `after`. `after` null: the first page, NetBox's newest last.
 */
async function listNewerReports(client: NetboxClient, after: ReportCursor | null, budget: RequestBudget): Promise<ListedReport[]> {
  const newer: ListedReport[] = [];
  // validity 3.0 added the reports list's filterset.
  const filtered = after !== null && Number.parseInt((await readNetboxStatus(client, budget)).validity ?? '', 10) >= 3;
  // The cursor keeps milliseconds: NetBox's microseconds may list the last seen report again, left out below.
  const query: Record<string, string> = filtered
    ? { created__gt: new Date(after.createdMs).toISOString(), ordering: 'created' }
    : { ordering: '-created' };
  await client.streamList(
    buildListPath(REPORTS_PATH, query),
    (results) => {
      let reachedSeen = after === null;
      for (const item of results) {
        const report = parseListedReport(item);
        if (!after || compareReportOrder(report, after) > 0) newer.push(report);
        else reachedSeen = true;
      }
      return filtered || !reachedSeen;
    },
    budget,
  );
  return newer.sort(compareReportOrder);
}

/** One entry of the list; anything without an id and a creation time is not validity's list. */
function parseListedReport(item: Record<string, unknown>): ListedReport {
  const { id, created } = item;
  const createdMs = typeof created === 'string' ? Date.parse(created) : Number.NaN;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || typeof created !== 'string' || Number.isNaN(createdMs))
    throw new NetboxError('PROTOCOL', `NetBox's reports list holds an entry without an id and a creation time (${REPORTS_PATH})`);
  return { reportId: id, created, createdMs };
}

/** One missed report as its webhook's delivery, through the webhook's parser. `deleted`: gone; `refused`: fails its checks. */
async function fetchMissedReport(reportId: number, context: SourceCatchUpContext): Promise<NewDelivery | 'deleted' | { refused: string }> {
  let document: unknown;
  try {
    document = await context.client.getJson(`${REPORTS_PATH}${reportId}/`, context.budget);
  } catch (error) {
    if (error instanceof NetboxError && error.code === 'NOT_FOUND') return 'deleted';
    throw error;
  }
  // The API makes `url` and `results_url` absolute (on the host NetBox believes it has), the webhook relative: the path is kept.
  const data = document as Record<string, unknown> | null;
  for (const key of data && typeof data === 'object' ? ['url', 'results_url'] : []) {
    const value = data![key];
    if (typeof value === 'string' && /^https?:\/\//i.test(value)) {
      const url = new URL(value);
      data![key] = `${url.pathname}${url.search}`;
    }
  }
  // The webhook's timestamp is the run's end, which the API does not keep: the parser then takes the creation time.
  const envelope = { event: 'created', model: 'compliancereport', object_type: 'validity.compliancereport', data, snapshots: null };
  const body = Buffer.from(JSON.stringify(envelope), 'utf8');
  let parsed;
  try {
    parsed = parseDelivery(body, context.source);
  } catch (error) {
    if (error instanceof RelayError)
      return { refused: [error.message, ...(error.issues ?? []).map((i) => `${i.path}: ${i.message}`)].join(' ') };
    throw error;
  }
  if (parsed.kind !== 'report' || parsed.report.id !== reportId)
    throw new NetboxError('PROTOCOL', `NetBox answered ${REPORTS_PATH}${reportId}/ with another object`);
  // Queued as its webhook would have been (its history row too, marked late when a newer report was stored first).
  const stored = buildNewDelivery(parsed, { body, sender: 'catch-up', receivedAt: context.now, netboxUrl: context.netboxUrl });
  return { ...stored, receivedVia: 'catch-up' };
}

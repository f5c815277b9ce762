import type { Request, RequestHandler, Response, Router } from 'express';
import type { TryNowResult } from '../delivery';
import { buildFilterParams, FILTER_PARAMS, parseListFilters, sendKeptMail } from '../http';
import { buildLinks, formatDateTime, formatShortDay } from '../report';
import { compareNames } from '../shared';
import { parseStoredId, type DeliveryRecord, type ListOptions } from '../store';
import { compareReportOrder } from '../trend';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { buildDeliveriesView, type DeliveriesInput, type ListPage } from './build-deliveries-view';
import { buildDeliveryView, readDeliveryContent, type DeliveryContent } from './build-delivery-view';
import { buildPassChart, type ChartReport } from './build-pass-chart';
import { buildPageContext, sendPage, type Authed, type DashboardDeps, type DashboardOptions, type DigestsInput } from './render-page';

type ReadContent = (record: DeliveryRecord) => Promise<DeliveryContent>;

export function registerDeliveryPages(router: Router, deps: DashboardDeps, form: RequestHandler, requireCsrf: RequestHandler): void {
  const { options } = deps;
  router.get('/', (req: Authed, res: Response) => showDeliveries(deps, req, res));
  router.get('/deliveries/:id', (req: Authed, res: Response) => showDelivery(deps, req, res));
  router.get('/deliveries/:id/message.eml', (req: Request, res: Response) => downloadMessage(deps, req, res));
  router.post('/deliveries/:id/retry', form, requireCsrf, (req: Authed, res: Response) => retryDelivery(deps, req, res));
  router.post('/try-now', form, requireCsrf, async (req: Authed, res: Response) => {
    const result = (await options.worker?.tryNow()) ?? 'not-paused';
    options.logger.info({ ip: req.ip, result }, 'dashboard: try the mail server now');
    res.redirect(303, `/ui?try_now=${result}`);
  });
  router.post('/deliveries/:id/retry-now', form, requireCsrf, (req: Authed, res: Response) => retryDeliveryNow(deps, req, res));
}

/** GET /: counts per state, the pass chart, the filters and one page of deliveries, and what a retry just did. */
async function showDeliveries(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options } = deps;
  const query = req.query as Record<string, unknown>;
  const filters = parseListFilters(query, options.timezone);
  // The chart and the list may show the same rows: each row's content is read once per request.
  const contents = new Map<number, Promise<DeliveryContent>>();
  const contentOf: ReadContent = (record) => {
    let content = contents.get(record.id);
    if (!content) contents.set(record.id, (content = readDeliveryContent(record, options.store)));
    return content;
  };
  const [{ counts }, charts, list, digests] = await Promise.all([
    options.store.readQueue(),
    readChartReports(deps, filters.ok ? filters.options : {}, contentOf),
    filters.ok ? readListPage(deps, filters.options, contentOf) : undefined,
    readDigests(options),
  ]);
  const page = buildPageContext(deps, req);
  const body = buildDeliveriesView(page, {
    list,
    query: filters.ok ? filters.query : pickText(query, FILTER_PARAMS, 200),
    issues: filters.ok ? undefined : filters.issues,
    counts,
    charts: buildSourceCharts(charts, filters.ok && FILTER_PARAMS.some((p) => filters.query[p] !== undefined)),
    flash: readFlash(query),
    routeNames: options.routeNames,
    failures: options.failures,
    sources: options.sources,
    digests,
  });
  sendPage(res, filters.ok ? 200 : 400, 'Deliveries', 'deliveries', body, page);
}

const DIGESTS_SHOWN = 10;
/** Deliveries on one page of the list (and the most the chart looks through), and the reports a chart shows per source. */
const LIST_ROWS = 100;
const CHART_REPORTS = 30;

async function readDigests(options: DashboardOptions): Promise<DigestsInput | undefined> {
  const schedules = options.digests?.schedules() ?? [];
  if (!options.digests || schedules.length === 0) return undefined;
  // A period without a delivery is the one before a route's first run: not a digest.
  const periods = (await options.digests.periods({ limit: DIGESTS_SHOWN + schedules.length })).filter((p) => p.deliveryId !== null);
  const shown = periods.slice(0, DIGESTS_SHOWN);
  return {
    schedules,
    periods: await Promise.all(shown.map(async (p) => ({ ...p, state: (await options.store.getDelivery(p.deliveryId!))?.state }))),
  };
}

/** One page of the list by keyset: one row more than asked for says whether a page follows in the direction of travel. */
async function readListPage(deps: DashboardDeps, filter: ListOptions, contentOf: ReadContent): Promise<ListPage> {
  const { options } = deps;
  const records = await options.store.listDeliveries({ ...filter, limit: LIST_ROWS + 1 });
  const more = records.length > LIST_ROWS;
  // Newest first: the extra row is the oldest when paging down, the newest when paging up.
  const shown = more ? (filter.afterId !== undefined ? records.slice(1) : records.slice(0, LIST_ROWS)) : records;
  const routes = await options.store.listRouteMails(shown.map((r) => r.id));
  const rows = await Promise.all(
    shown.map(async (record) => {
      const content = await contentOf(record);
      const own = routes.filter((r) => r.deliveryId === record.id);
      return { record, content, netboxLink: buildNetboxLink(options, record, content), routes: own };
    }),
  );
  const hasNewer = filter.afterId !== undefined ? more : filter.beforeId !== undefined;
  const hasOlder = filter.afterId !== undefined || more;
  return { rows, newerThan: hasNewer ? shown[0]?.id : undefined, olderThan: hasOlder ? shown.at(-1)?.id : undefined };
}

/** The newest reports the filters select, per NetBox source (report ids compare only within one NetBox), oldest first. */
async function readChartReports(deps: DashboardDeps, filter: ListOptions, contentOf: ReadContent): Promise<Map<string, ChartReport[]>> {
  const { options } = deps;
  const { beforeId: _page, afterId: _otherPage, ...filters } = filter;
  const records = await options.store.listDeliveries({ ...filters, limit: LIST_ROWS });
  const rows = await Promise.all(records.map(async (record) => ({ record, content: await contentOf(record) })));
  const bySource = new Map<string, ChartReport[]>();
  for (const { record, content } of rows) {
    const reports = bySource.get(record.source) ?? [];
    if (content.kind !== 'report' || reports.length >= CHART_REPORTS) continue;
    const { report } = content;
    reports.push({
      reportId: report.id,
      createdMs: Date.parse(report.created),
      deliveryId: record.id,
      when: formatDateTime(report.created, options.timezone),
      day: formatShortDay(report.created, options.timezone),
      counts: content.counts,
    });
    bySource.set(record.source, reports);
  }
  for (const reports of bySource.values()) reports.sort((a, b) => compareReportOrder(a, b) || a.deliveryId - b.deliveryId);
  return new Map([...bySource].sort(([a], [b]) => compareNames(a, b)));
}

/** One chart per source (wide and narrow); one empty chart when the filters select no report. */
function buildSourceCharts(bySource: Map<string, ChartReport[]>, filtered: boolean): DeliveriesInput['charts'] {
  if (bySource.size === 0) return [buildPassChart([], { emptyText: filtered ? 'No report matches these filters' : undefined })];
  // The default source alone (one NetBox, or rows stored before sources) needs no name.
  const named = bySource.size > 1 || !bySource.has(DEFAULT_SOURCE_NAME);
  return [...bySource].map(([source, reports]) => buildPassChart(reports, named ? { source } : {}));
}

function buildNetboxLink(options: DashboardOptions, record: DeliveryRecord, content: DeliveryContent): string | undefined {
  const netboxUrl = options.sources?.find((s) => s.name === record.source)?.netbox.url;
  if (content.kind !== 'report' || !netboxUrl) return undefined;
  return buildLinks(content.report.id, content.report.url, content.report.results_url, netboxUrl).report;
}

async function findDelivery(deps: DashboardDeps, req: Request, res: Response): Promise<DeliveryRecord | undefined> {
  const id = parseStoredId(String(req.params.id));
  const record = id === undefined ? undefined : await deps.options.store.getDelivery(id);
  if (!record) sendPage(res, 404, 'Not found', 'no-such-delivery');
  return record;
}

async function showDelivery(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options } = deps;
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  const content = await readDeliveryContent(record, options.store);
  const page = buildPageContext(deps, req);
  const body = buildDeliveryView({
    page,
    record,
    content,
    sent: await options.store.listSentMessages(record.id),
    reportLink: buildNetboxLink(options, record, content),
    routes: await options.store.listRouteMails([record.id]),
    named: (options.sources?.length ?? 0) > 1,
  });
  sendPage(res, 200, `Delivery #${record.id}`, 'delivery', body, page);
}

/** GET /deliveries/:id/message.eml?route=NAME: one route's kept message, byte for byte (without `route`, the first one kept). */
async function downloadMessage(deps: DashboardDeps, req: Request, res: Response): Promise<void> {
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  const { route } = req.query;
  const sent =
    typeof route === 'string' && route.length <= 200
      ? await deps.options.store.getSentMessage(record.id, route)
      : (await deps.options.store.listSentMessages(record.id))[0];
  if (!sent) res.status(404).type('text').send('This delivery has no kept message for that route.');
  else sendKeptMail(res, record.id, sent);
}

async function retryDelivery(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options } = deps;
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  // Only dead deliveries are offered a retry here; a sent one is not mailed twice by a stray click.
  const requeued = record.state === 'dead' && (await options.store.requeue(options.clock.now(), record.id)) > 0;
  if (requeued) {
    options.logger.info({ deliveryId: record.id, ip: req.ip }, 'dashboard: dead delivery queued again');
    options.worker?.kick();
  }
  // While sending is paused a requeued delivery would only wait: retrying is the operator saying "try now".
  const paused = requeued && (options.worker?.breaker.state ?? 'closed') !== 'closed';
  const tried = paused ? await options.worker?.tryNow() : undefined;
  res.redirect(303, buildReturnUrl(req, requeued ? 'retried' : 'not_retried', record.id, tried));
}

/** POST /deliveries/:id/retry-now: a retrying delivery is due at once (its attempts and backoff kept). */
async function retryDeliveryNow(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options } = deps;
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  const due = await options.store.retryNow(record.id, options.clock.now());
  if (due) {
    options.logger.info({ deliveryId: record.id, ip: req.ip }, 'dashboard: retrying delivery made due now');
    options.worker?.kick();
  }
  res.redirect(303, buildReturnUrl(req, due ? 'retried_now' : 'not_retried_now', record.id));
}

/** What a retry did while sending was paused (it tried the mail server now), or nothing when it was not paused. */
function describeRetryWhilePaused(tried: unknown, id: number): string {
  if (tried === 'probing-now')
    return ` Sending was paused, so the mail server is being tried now: the oldest queued delivery goes first as a probe, and the queue (#${id} included) follows in order once it gets through.`;
  if (tried === 'probe-in-flight')
    return ` Sending is paused and a probe is in flight: #${id} goes in its turn once the mail server answers.`;
  return '';
}

const TRY_NOW_TEXT: Record<TryNowResult, string> = {
  'probing-now':
    'Trying the mail server now: the oldest queued delivery is sent as a probe; when it gets through, the queue resumes oldest first.',
  'probe-in-flight': 'A probe of the mail server is in flight now: its answer decides whether the queue resumes.',
  'not-paused': 'Sending is not paused: the queue was looked at again.',
};

/** What the last POST did, from the redirect's query: a retry, a "retry now", a "try now", a retry that also tried the mail server, a waiver added or expired. */
export function readFlash(query: Record<string, unknown>): { text: string; bad: boolean } | undefined {
  if (typeof query.added === 'string') return { text: `Waiver #${query.added.slice(0, 20)} added.`, bad: false };
  if (typeof query.expired === 'string') return { text: `Waiver #${query.expired.slice(0, 20)} expired: it no longer holds.`, bad: false };
  const id = (name: string) => {
    const n = Number(query[name]);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  };
  const retried = id('retried');
  if (retried) return { text: `Delivery #${retried} is queued again.${describeRetryWhilePaused(query.try_now, retried)}`, bad: false };
  const now = id('retried_now');
  if (now) return { text: `Delivery #${now} is due now: the worker tries it at once.`, bad: false };
  const not = id('not_retried');
  if (not) return { text: `Delivery #${not} was not retried: it is not dead (any more).`, bad: true };
  const notNow = id('not_retried_now');
  if (notNow) return { text: `Delivery #${notNow} was not retried: it is not waiting for a retry (any more).`, bad: true };
  const tried = typeof query.try_now === 'string' ? TRY_NOW_TEXT[query.try_now as TryNowResult] : undefined;
  return tried ? { text: tried, bad: false } : undefined;
}

/** The named single text values of a query or form, bounded: an invalid query or form is shown back as typed. */
export function pickText<K extends string>(
  from: Record<string, unknown>,
  names: readonly K[],
  maxLength = 400,
): Partial<Record<K, string>> {
  const picked = names.flatMap((name) =>
    typeof from[name] === 'string' && from[name] !== '' ? [[name, from[name].slice(0, maxLength)]] : [],
  );
  return Object.fromEntries(picked) as Partial<Record<K, string>>;
}

/** Back to the list with the filters the form came from (the hidden `back` field, filters only) and what happened. */
export function buildReturnUrl(req: Request, outcome: string, id: number, tried?: TryNowResult): string {
  const back = (req.body as Record<string, unknown> | undefined)?.back;
  const given = new URLSearchParams(typeof back === 'string' ? back.slice(0, 1024) : '');
  const kept = buildFilterParams(Object.fromEntries(FILTER_PARAMS.flatMap((name) => (given.has(name) ? [[name, given.get(name)!]] : []))));
  kept.set(outcome, String(id));
  if (tried) kept.set('try_now', tried);
  return `/ui?${kept.toString()}`;
}

import type { ComposedMail, ComposedNotice, ReportComposer } from '../compose';
import type { OutgoingMail } from '../mail';
import { buildFailureClass, classifyRenderFailure, type FailureClass, type Notifier } from '../notify';
import type { Clock, FailureCatalogue, Logger } from '../shared';
import {
  StorageUnavailableError,
  type DeliveryRecord,
  type DeliveryStateChange,
  type NewRouteMail,
  type RouteMailOutcome,
  type RouteMailRecord,
  type Store,
} from '../store';
import type { BatchHistory } from './create-batch-history';
import type { NextState, RetryDecider, RetrySettings } from './retry-policy';
import type { RoutePlanner } from '../routing';

/** The composer of each kind of delivery (the `kind` column chooses); a report is rendered once per route of its plan. */
export interface Composers {
  report: ReportComposer;
  digest: (delivery: DeliveryRecord, log: Logger) => Promise<ComposedNotice>;
  watchdog: (delivery: DeliveryRecord, log: Logger) => Promise<ComposedNotice>;
}

/** Route mails built, sent and recorded together: the most held per delivery, and mailed again after a crash. */
const ROUTE_MAILS_PER_SLICE = 100;

/** One route of a delivery's plan: its decision and state; once built, its `mail` (dropped once `row` is written) or `failure`. */
export interface RouteMail extends NewRouteMail, Pick<RouteMailRecord, 'state' | 'messageId' | 'lastError' | 'lastErrorCode'> {
  mail?: OutgoingMail;
  failure?: FailureClass;
  accepted?: { response: string; at: number };
  next?: NextState;
  row?: RouteMailOutcome;
}

export interface BatchItem {
  delivery: DeliveryRecord;
  log: Logger;
  /** The route plan: as recorded at an earlier attempt, or decided now (then `newPlan` holds it for the settle). */
  plan: RouteMail[];
  newPlan?: NewRouteMail[];
  /** Kept while route mails remain to build from it. */
  composed?: ComposedMail;
  /** The routes due in this attempt, in plan order, and the first ones built so far (slice by slice). */
  due: RouteMail[];
  mails: RouteMail[];
  /** Nothing could be composed (a template error, say): nothing was sent. */
  composeFailure?: FailureClass;
  /** The store was away while composing: nothing is written for it; its claim comes back when its lease ends. */
  abandoned?: boolean;
  /** The queue paused before this delivery's first send: it waits with the queue until then. */
  deferredUntil?: number;
  isProbe?: boolean;
  /** Where its settle sent it, once decided: `sent` (without a Message-ID when no route mailed it), `retrying` or `dead`. */
  settled?: DeliveryStateChange;
  /** The failure that decided a `retrying` or `dead` settle (a dead one's message names each route that failed). */
  failure?: FailureClass;
}

export interface WorkerOptions {
  store: Store;
  history: BatchHistory;
  composers: Composers;
  /** Decides what each route does with a delivery, at its first attempt; the settle records it. */
  planRoutes: RoutePlanner;
  notifier: Notifier;
  /** The relay's catalogue (its transports' codes and its own): a failure is classified, a route's stored code read, with it. */
  failures: FailureCatalogue;
  clock: Clock;
  logger: Logger;
  /** Deliveries sent side by side (SMTP's pool size); also the claim's bound, so at most that many are mailed twice after a crash. */
  concurrency: number;
  /** The NetBox sources configured: with more than one, a claim leaves a send slot for the others. */
  sourceCount?: number;
  /** How long a claim lasts (one not settled by then is taken again): a refused write is tried again well within it. */
  leaseMs: number;
  pollMs: number;
  retry: RetrySettings;
  random?: () => number;
  /** Hears every delivery once its settle is recorded (`settled`, and `failure` when it failed): metrics, the transport's health, tests. */
  observe?: (item: BatchItem, durationMs: number) => void;
}

export type Stage = WorkerOptions & { policy: RetryDecider; random: () => number };

/** The compose stage, one delivery per event-loop turn (webhooks answered meanwhile): plan read or decided, due mails built. */
export async function composeBatch(stage: Stage, deliveries: DeliveryRecord[]): Promise<BatchItem[]> {
  const [recorded] = await Promise.all([stage.store.listRouteMails(deliveries.map((d) => d.id)), stage.history.startBatch(deliveries)]);
  const items: BatchItem[] = [];
  for (const delivery of deliveries) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const item: BatchItem = {
      delivery,
      log: stage.logger.child({ deliveryId: delivery.id, reportId: delivery.reportId, attempt: delivery.attempts }),
      plan: recorded.filter((r) => r.deliveryId === delivery.id),
      due: [],
      mails: [],
    };
    items.push(item);
    try {
      await composeItem(stage, item);
    } catch (error) {
      // Composing reads the store (the trend's history, routes' last mails): a store away says nothing about the report.
      if (!(error instanceof StorageUnavailableError)) throw error;
      item.log.error(
        { err: error },
        'cannot compose: the store is unavailable (nothing was sent); it will be tried again when its lease expires',
      );
      item.abandoned = true;
    }
  }
  return items;
}

async function composeItem(stage: Stage, item: BatchItem): Promise<void> {
  const { delivery, log } = item;
  let composed: ComposedMail;
  try {
    composed =
      delivery.kind === 'report'
        ? await stage.composers.report.compose(delivery, log)
        : await stage.composers[delivery.kind](delivery, log);
  } catch (error) {
    if (error instanceof StorageUnavailableError) throw error;
    item.composeFailure = classifyRenderFailure(error, stage.failures);
    return;
  }
  if (item.plan.length === 0) {
    item.newPlan =
      composed.kind === 'notice'
        ? [{ route: composed.route, position: 0, outcome: 'send', reason: composed.reason ?? 'relay notice (not routed)', reminder: false }]
        : await stage.planRoutes(composed);
    const blank = { messageId: null, lastError: null, lastErrorCode: null };
    item.plan = item.newPlan.map((d) => ({ ...d, ...blank, state: d.outcome === 'send' ? 'pending' : d.outcome }));
    for (const d of item.newPlan)
      if (d.outcome === 'suppressed') log.info({ route: d.route, reason: d.reason }, `route ${d.route}: mail suppressed`);
      else log.debug({ route: d.route, outcome: d.outcome, reason: d.reason }, `route ${d.route}: ${d.outcome}`);
  }
  item.composed = composed;
  // A route that failed for good is tried again only when the delivery starts over, not on another route's retry.
  item.due = item.plan.filter((m) => m.state === 'pending' || (m.state === 'failed' && delivery.attempts <= 1));
  await buildNextSlice(stage, item);
}

export async function buildNextSlice(stage: Stage, item: BatchItem): Promise<void> {
  const start = item.mails.length;
  for (const entry of item.due.slice(start, start + ROUTE_MAILS_PER_SLICE)) {
    await buildRouteMail(stage, item.composed!, entry);
    if (entry.mail) item.log.debug({ route: entry.route, subject: entry.mail.subject }, 'mail rendered');
    item.mails.push(entry);
  }
  // The report, its owner groups and insights are not needed for the sends.
  if (item.mails.length === item.due.length) item.composed = undefined;
}

/** The finished mail of one route, or why there is none: its template failed, or the route is gone from ROUTES_FILE. */
async function buildRouteMail(stage: Stage, composed: ComposedMail, entry: RouteMail): Promise<void> {
  const { route } = entry;
  const { render } = stage.composers.report;
  try {
    entry.mail = composed.kind === 'report' ? await render(composed, entry) : route === composed.route ? composed.message : undefined;
    entry.failure = entry.mail
      ? undefined
      : buildFailureClass('ROUTE_REMOVED', `route ${route} is no longer in ROUTES_FILE; restore it and retry the delivery`, stage.failures);
  } catch (error) {
    entry.failure = classifyRenderFailure(error ?? new Error('rendering failed'), stage.failures);
  }
}

import type { ComposedMail, ComposedNotice, ReportComposer, RouteContext } from '../compose';
import type { OutgoingMail } from '../mail';
import { buildFailureClass, classifyRenderFailure, type FailureClass, type NotifyResult } from '../notify';
import type { Logger } from '../shared';
import {
  StorageUnavailableError,
  type DeliveryRecord,
  type NewRouteMail,
  type RouteMailOutcome,
  type RouteMailRecord,
  type Store,
} from '../store';
import type { BatchHistory } from './create-batch-history';
import type { NextState } from './retry-policy';
import type { RoutePlanner } from '../routing';

/** The composer of each kind of delivery (a report, a digest, the watchdog's notice): the `kind` column chooses. */
export interface Composers {
  /** Composed, then rendered once per route of its plan. */
  report: ReportComposer;
  digest: NoticeComposer;
  watchdog: NoticeComposer;
}

type NoticeComposer = (delivery: DeliveryRecord, log: Logger) => Promise<ComposedNotice>;

/** One route's place in a delivery's plan, as recorded or as decided at this attempt. */
type PlannedRoute = Pick<
  RouteMailRecord,
  'route' | 'state' | 'reason' | 'reminder' | 'ownerGroup' | 'messageId' | 'lastError' | 'lastErrorCode'
>;

/**
 * Route mails of one delivery built, sent and recorded together: at most this many built mails (about 50 KB
 * each) are held per delivery, and at most this many are mailed again after a crash.
 */
const ROUTE_MAILS_PER_SLICE = 100;

/** One route mail of this attempt: built (and, after the send stage, what came of it), or why it could not be built. */
export interface RouteMail {
  route: string;
  /** Dropped once `row` is written (an earlier slice). */
  mail?: OutgoingMail;
  failure?: FailureClass;
  result?: NotifyResult;
  sentAt?: number;
  /** What the retry policy decided after a failed send (or a build that failed). */
  next?: NextState;
  /** What it came to, as the settle writes it; undefined while untried. */
  row?: RouteMailOutcome;
}

/** A claimed delivery on its way through the stages; each stage fills in its part. */
export interface BatchItem {
  delivery: DeliveryRecord;
  log: Logger;
  /** The route plan: as recorded at an earlier attempt, or decided now (then `newPlan` holds it for the settle). */
  plan: PlannedRoute[];
  newPlan?: NewRouteMail[];
  /** What the composer made of the delivery, while route mails remain to build from it. */
  composed?: ComposedMail;
  /** The routes due in this attempt, in plan order. */
  due: PlannedRoute[];
  /** The route mails of the slices built so far (`due`'s first ones), in plan order. */
  mails: RouteMail[];
  /** Nothing could be composed (a template error, say): nothing was sent. */
  composeFailure?: FailureClass;
  /** The store was away while composing: nothing is written for it; its claim comes back when its lease ends. */
  abandoned?: boolean;
  /** The queue paused before this delivery's first send: it waits with the queue until then. */
  deferredUntil?: number;
  /** This delivery tests a paused server: it alone may send. */
  isProbe?: boolean;
}

export interface ComposeStage {
  composers: Composers;
  /** Decides what each route does with a delivery, at its first attempt; the settle records it. */
  planRoutes: RoutePlanner;
  store: Pick<Store, 'listRouteMails'>;
  history: Pick<BatchHistory, 'startBatch'>;
}

/**
 * The compose stage, one delivery at a time with a turn of the event loop between two (so webhooks are
 * answered meanwhile): composed, its plan read (or decided), every route mail due built to its final bytes.
 */
export async function composeBatch(stage: ComposeStage, deliveries: DeliveryRecord[], log: Logger): Promise<BatchItem[]> {
  const [recorded] = await Promise.all([stage.store.listRouteMails(deliveries.map((d) => d.id)), stage.history.startBatch(deliveries)]);
  const items: BatchItem[] = [];
  for (const delivery of deliveries) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const item: BatchItem = {
      delivery,
      log: log.child({ deliveryId: delivery.id, reportId: delivery.reportId, attempt: delivery.attempts }),
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

async function composeItem(stage: ComposeStage, item: BatchItem): Promise<void> {
  const { delivery } = item;
  let composed: ComposedMail;
  try {
    composed =
      delivery.kind === 'report'
        ? await stage.composers.report.compose(delivery, item.log)
        : await stage.composers[delivery.kind](delivery, item.log);
  } catch (error) {
    if (error instanceof StorageUnavailableError) throw error;
    item.composeFailure = classifyRenderFailure(error);
    return;
  }
  if (item.plan.length === 0) {
    item.newPlan =
      composed.kind === 'notice'
        ? [{ route: composed.route, position: 0, outcome: 'send', reason: composed.reason ?? 'relay notice (not routed)', reminder: false }]
        : await stage.planRoutes(delivery, composed);
    item.plan = item.newPlan.map((d) => ({
      ...d,
      state: d.outcome === 'send' ? 'pending' : d.outcome,
      messageId: null,
      lastError: null,
      lastErrorCode: null,
    }));
    logPlan(item);
  }
  item.composed = composed;
  item.due = selectDueRoutes(item.plan, delivery.attempts);
  await buildNextSlice(stage.composers.report.render, item);
}

/** Builds the next {@link ROUTE_MAILS_PER_SLICE} due route mails of a composed delivery. */
export async function buildNextSlice(render: ReportComposer['render'], item: BatchItem): Promise<void> {
  const start = item.mails.length;
  for (const entry of item.due.slice(start, start + ROUTE_MAILS_PER_SLICE)) {
    const mail = await buildRouteMail(render, item.composed!, entry);
    if (mail.mail) item.log.debug({ route: mail.route, subject: mail.mail.subject }, 'mail rendered');
    item.mails.push(mail);
  }
  // The report, its owner groups and insights are not needed for the sends.
  if (item.mails.length === item.due.length) item.composed = undefined;
}

/**
 * The routes to mail in this attempt. A route that failed for good is tried again only when the delivery
 * starts over (its first attempt, or an operator's requeue), not on each retry of another route.
 */
function selectDueRoutes(plan: PlannedRoute[], attempts: number): PlannedRoute[] {
  return plan.filter((m) => m.state === 'pending' || (m.state === 'failed' && attempts <= 1));
}

/** The finished mail of one route, or why there is none: its template failed, or the route is gone from ROUTES_FILE. */
async function buildRouteMail(render: ReportComposer['render'], composed: ComposedMail, entry: PlannedRoute): Promise<RouteMail> {
  const { route } = entry;
  try {
    let mail: OutgoingMail | undefined;
    if (composed.kind === 'report') {
      const group = entry.ownerGroup ?? null;
      const context: RouteContext = {
        name: group?.route ?? route,
        mailRoute: route,
        reminder: entry.reminder,
        reason: entry.reason,
        group,
      };
      mail = await render(composed, context);
    } else if (route === composed.route) mail = composed.message;
    if (mail) return { route, mail };
    return {
      route,
      failure: buildFailureClass('ROUTE_REMOVED', `route ${route} is no longer in ROUTES_FILE; restore it and retry the delivery`),
    };
  } catch (error) {
    return { route, failure: classifyRenderFailure(error ?? new Error('rendering failed')) };
  }
}

function logPlan(item: BatchItem): void {
  for (const d of item.newPlan ?? []) {
    if (d.outcome === 'suppressed') item.log.info({ route: d.route, reason: d.reason }, `route ${d.route}: mail suppressed`);
    else item.log.debug({ route: d.route, outcome: d.outcome, reason: d.reason }, `route ${d.route}: ${d.outcome}`);
  }
}

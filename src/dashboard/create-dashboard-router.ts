import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { buildLinks, formatDateTime } from '../report';
import type { Clock, Logger } from '../shared';
import type { DeliveryRecord, Store } from '../store';
import { buildPassChart, type ChartReport } from './build-pass-chart';
import { html } from './html';
import { createLoginThrottle } from './login-throttle';
import { readDeliveryContent, toChartReport } from './read-delivery-content';
import { DASHBOARD_CSP, renderDeliveries, renderDelivery, renderLayout, renderLogin } from './render-pages';
import { createSessionKeys, readCookie, SESSION_COOKIE, SESSION_TTL_MS, type Session, type SessionKeys } from './session';

export interface DashboardOptions {
  /** ADMIN_TOKEN; without it the dashboard answers 404 and says how to turn it on. */
  adminToken?: string;
  store: Pick<Store, 'listDeliveries' | 'getDelivery' | 'getDeliveryBody' | 'getSentMessage' | 'requeue' | 'listRouteMails'>;
  clock: Clock;
  logger: Logger;
  timezone: string;
  netboxUrl?: string;
  /**
   * The NetBox sources (SOURCES_FILE) by name with their NetBox URL: with more than one, the list names
   * each delivery's source and filters by it (`?source=`), and a report links into its own NetBox.
   */
  sources?: readonly { name: string; netbox: { url?: string } }[];
  /** Outcomes of sends waiting to be recorded (the store refused them), for the banner. */
  unrecordedOutcomes?: () => number;
  /** A delivery was put back in the queue (wakes the worker). */
  onRequeued?: (id: number) => void;
  /** Deliveries listed on the main page, and reports in the chart. */
  listLimit?: number;
  chartLimit?: number;
  /** Waits before a failed login is answered (see createLoginThrottle); injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** Warnings about the relay's own configuration, shown on every page after login. */
  notices?: string[];
}

type Authed = Request & { session?: Session };

/** What the dashboard's handlers share once ADMIN_TOKEN is set. */
interface DashboardDeps {
  options: DashboardOptions;
  keys: SessionKeys;
  /** Epoch milliseconds as the dashboard shows them, in TIMEZONE. */
  formatTime: (ms: number) => string;
}

/**
 * The dashboard at /ui: a login form that exchanges ADMIN_TOKEN for a signed HttpOnly,
 * SameSite=Strict session cookie; recent deliveries with a retry button for dead ones (POST with a
 * per-session CSRF token); a server-made SVG chart of pass percentages per severity; and for each
 * delivery the exact mail that was sent. No JavaScript anywhere, and a CSP that forbids it.
 */
export function createDashboardRouter(options: DashboardOptions): Router {
  const router = express.Router();
  router.use(setSecurityHeaders);
  if (!options.adminToken) {
    router.use(sendDashboardOff);
    return router;
  }

  const deps: DashboardDeps = {
    options,
    keys: createSessionKeys(options.adminToken),
    formatTime: (ms: number) => formatDateTime(new Date(ms).toISOString(), options.timezone),
  };
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const requireCsrf = createCsrfCheck(deps);

  router.get('/login', (req, res) => {
    if (readSession(deps, req)) return res.redirect(303, '/ui');
    res.type('html').send(renderLayout('Log in', renderLogin(undefined), {}));
  });
  router.post('/login', form, createLoginHandler(deps));
  // Everything below needs a session; a browser without one is sent to the login form.
  router.use(createSessionGuard(deps));
  router.post('/logout', form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: '/ui', httpOnly: true, sameSite: 'strict' });
    res.redirect(303, '/ui/login');
  });
  router.get('/', (req: Authed, res: Response) => showDeliveries(deps, req, res));
  router.get('/deliveries/:id', (req: Authed, res: Response) => showDelivery(deps, req, res));
  router.get('/deliveries/:id/message.eml', (req: Request, res: Response) => downloadMessage(deps, req, res));
  router.post('/deliveries/:id/retry', form, requireCsrf, (req: Authed, res: Response) => retryDelivery(deps, req, res));
  return router;
}

/** Headers on every dashboard answer: no scripts, no framing, no caching, no referrer. */
function setSecurityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set({
    'Content-Security-Policy': DASHBOARD_CSP,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  });
  next();
}

/** Without ADMIN_TOKEN every dashboard page is a 404 that says how to turn it on. */
function sendDashboardOff(_req: Request, res: Response): void {
  res
    .status(404)
    .type('html')
    .send(
      renderLayout(
        'Dashboard off',
        html`<section><h1>The dashboard is off</h1><p>Set <code>ADMIN_TOKEN</code> (at least 16 characters) to turn it on.</p></section>`,
        {},
      ),
    );
}

/** The request's valid session, if its cookie carries one. */
function readSession(deps: DashboardDeps, req: Request): Session | undefined {
  return deps.keys.verify(readCookie(req.get('cookie'), SESSION_COOKIE), deps.options.clock.now());
}

/** POST /login: the admin token for a session cookie; failures are slowed down per address. */
function createLoginHandler(deps: DashboardDeps): (req: Request, res: Response) => Promise<void> {
  const { options, keys } = deps;
  const throttle = createLoginThrottle();
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async (req, res) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    // The token is checked first: the right one is always accepted, whatever failed before.
    if (!keys.verifyAdminToken(token)) {
      const delayMs = throttle.recordFailure(address, options.clock.now());
      options.logger.warn({ ip: req.ip, delayMs }, 'dashboard: failed login');
      if (delayMs > 0) await sleep(delayMs);
      res
        .status(401)
        .type('html')
        .send(renderLayout('Log in', renderLogin('That is not the admin token.'), {}));
      return;
    }
    throttle.recordSuccess(address);
    const { cookie } = keys.issue(options.clock.now());
    res.cookie(SESSION_COOKIE, cookie, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/ui', maxAge: SESSION_TTL_MS });
    options.logger.info({ ip: req.ip }, 'dashboard: logged in');
    res.redirect(303, '/ui');
  };
}

/** Lets a request with a session through (as `req.session`); a GET without one goes to the login form. */
function createSessionGuard(deps: DashboardDeps): (req: Authed, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const session = readSession(deps, req);
    if (!session) {
      if (req.method === 'GET') return res.redirect(303, '/ui/login');
      return res
        .status(401)
        .type('html')
        .send(renderLayout('Log in', renderLogin('Your session has ended: log in again.'), {}));
    }
    req.session = session;
    next();
  };
}

/** Every POST carries the session's CSRF token in a hidden field. */
function createCsrfCheck(deps: DashboardDeps): (req: Authed, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const token = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (!deps.keys.verifyCsrf(req.session!, token)) {
      res
        .status(403)
        .type('html')
        .send(
          renderLayout(
            'Refused',
            html`<section><h1>Refused</h1><p>The form's security token is missing or stale. <a href="/ui">Reload the dashboard</a> and try again.</p></section>`,
            {},
          ),
        );
      return;
    }
    next();
  };
}

/** GET /: recent deliveries, the pass chart, and what a retry just did. */
async function showDeliveries(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options, keys, formatTime } = deps;
  const limit = options.listLimit ?? 100;
  const sourceNames = (options.sources ?? []).map((s) => s.name);
  const source = typeof req.query.source === 'string' && sourceNames.includes(req.query.source) ? req.query.source : undefined;
  const records = await options.store.listDeliveries({ limit, netboxSource: source });
  const rows = await Promise.all(records.map(async (record) => ({ record, content: await readDeliveryContent(record, options.store) })));
  const chartReports: ChartReport[] = rows
    .filter((r): r is typeof r & { content: { kind: 'report' } } => r.content.kind === 'report')
    .slice(0, options.chartLimit ?? 30)
    .map((r) => toChartReport(r.record.id, r.content.report, formatDateTime(r.content.report.created, options.timezone)))
    .sort((a, b) => a.reportId - b.reportId || a.deliveryId - b.deliveryId);
  const csrf = keys.csrfToken(req.session!);
  const retried = Number(req.query.retried);
  const notRetried = Number(req.query.not_retried);
  const flash =
    Number.isInteger(retried) && retried > 0
      ? { text: `Delivery #${retried} is queued again.`, bad: false }
      : Number.isInteger(notRetried) && notRetried > 0
        ? { text: `Delivery #${notRetried} was not retried: it is not dead (any more).`, bad: true }
        : undefined;
  res.type('html').send(
    renderLayout(
      'Deliveries',
      renderDeliveries({
        rows,
        chart: buildPassChart(chartReports),
        chartCount: chartReports.length,
        csrf,
        flash,
        formatTime,
        sources: sourceNames.length > 1 ? { names: sourceNames, selected: source } : undefined,
      }),
      { csrf, notices: options.notices, unrecorded: options.unrecordedOutcomes?.() },
    ),
  );
}

/** The delivery named by `:id`, or undefined once a 404 page has been sent. */
async function findDelivery(deps: DashboardDeps, req: Request, res: Response): Promise<DeliveryRecord | undefined> {
  const id = /^\d{1,15}$/.test(String(req.params.id)) ? Number(req.params.id) : NaN;
  const record = Number.isSafeInteger(id) ? await deps.options.store.getDelivery(id) : undefined;
  if (!record)
    res
      .status(404)
      .type('html')
      .send(renderLayout('Not found', html`<section><h1>No such delivery</h1><p><a href="/ui">All deliveries</a></p></section>`, {}));
  return record;
}

/** GET /deliveries/:id: one delivery, its routes and the mail that was sent. */
async function showDelivery(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options, keys, formatTime } = deps;
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  const content = await readDeliveryContent(record, options.store);
  const sent = await options.store.getSentMessage(record.id);
  const netboxUrl = options.sources ? options.sources.find((s) => s.name === record.netboxSource)?.netbox.url : options.netboxUrl;
  const reportLink =
    content.kind === 'report' && netboxUrl
      ? buildLinks(content.report.id, content.report.url, content.report.results_url, netboxUrl).report
      : undefined;
  const csrf = keys.csrfToken(req.session!);
  const routes = await options.store.listRouteMails([record.id]);
  res.type('html').send(
    renderLayout(
      `Delivery #${record.id}`,
      renderDelivery({ record, content, sent, csrf, formatTime, reportLink, routes, named: (options.sources?.length ?? 0) > 1 }),
      {
        csrf,
        notices: options.notices,
        unrecorded: options.unrecordedOutcomes?.(),
      },
    ),
  );
}

/** GET /deliveries/:id/message.eml: the kept message, byte for byte. */
async function downloadMessage(deps: DashboardDeps, req: Request, res: Response): Promise<void> {
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  const sent = await deps.options.store.getSentMessage(record.id);
  if (!sent) {
    res.status(404).type('text').send('This delivery has no kept message.');
    return;
  }
  res.set('Content-Disposition', `attachment; filename="delivery-${record.id}.eml"`).type('message/rfc822').send(sent.raw);
}

/** POST /deliveries/:id/retry: queues a dead delivery again and goes back to the list. */
async function retryDelivery(deps: DashboardDeps, req: Authed, res: Response): Promise<void> {
  const { options } = deps;
  const record = await findDelivery(deps, req, res);
  if (!record) return;
  // Only dead deliveries are offered a retry here; a sent one is not mailed twice by a stray click.
  const requeued = record.state === 'dead' && (await options.store.requeue(record.id, options.clock.now()));
  if (requeued) {
    options.logger.info({ deliveryId: record.id, ip: req.ip }, 'dashboard: dead delivery queued again');
    options.onRequeued?.(record.id);
  }
  res.redirect(303, requeued ? `/ui?retried=${record.id}` : `/ui?not_retried=${record.id}`);
}

import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { recordTokenAttempt } from '../http';
import { formatDateTime } from '../report';
import { createAuthThrottle } from '../shared';
import { registerDeliveryPages } from './delivery-pages';
import {
  createSessionKeys,
  DASHBOARD_CSP,
  readCookie,
  sendPage,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  type Authed,
  type DashboardDeps,
  type DashboardOptions,
  type Session,
} from './render-page';
import { registerWaiverPages } from './waiver-pages';

/** The dashboard at /ui: ADMIN_TOKEN buys a signed session cookie, every POST carries a CSRF token, and no script runs. */
export function createDashboardRouter(options: DashboardOptions): Router {
  const router = express.Router();
  router.use(setSecurityHeaders);
  if (!options.adminToken) {
    router.use((_req, res) => sendPage(res, 404, 'Dashboard off', 'dashboard-off'));
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
    sendPage(res, 200, 'Log in', 'login');
  });
  router.post('/login', form, createLoginHandler(deps));
  // Everything below needs a session; a browser without one is sent to the login form.
  router.use(createSessionGuard(deps));
  router.post('/logout', form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: '/ui', httpOnly: true, sameSite: 'strict' });
    res.redirect(303, '/ui/login');
  });
  registerDeliveryPages(router, deps, form, requireCsrf);
  if (options.waivers) registerWaiverPages(router, { ...deps, book: options.waivers }, requireCsrf);
  return router;
}

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

function readSession(deps: DashboardDeps, req: Request): Session | undefined {
  return deps.keys.verify(readCookie(req.get('cookie'), SESSION_COOKIE), deps.options.clock.now());
}

/** POST /login: the admin token for a session cookie; failures are slowed down per address. */
function createLoginHandler(deps: DashboardDeps): (req: Request, res: Response) => Promise<void> {
  const { options, keys } = deps;
  const attempts = { ...options, throttle: options.throttle ?? createAuthThrottle() };
  return async (req, res) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    // The token is checked first: the right one is always accepted, whatever failed before.
    if (!(await recordTokenAttempt(attempts, req, keys.verifyAdminToken(token), 'dashboard: failed login')))
      return sendPage(res, 401, 'Log in', 'login', { error: 'That is not the admin token.' });
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
      return sendPage(res, 401, 'Log in', 'login', { error: 'Your session has ended: log in again.' });
    }
    req.session = session;
    next();
  };
}

function createCsrfCheck(deps: DashboardDeps): (req: Authed, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const token = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (deps.keys.verifyCsrf(req.session!, token)) return next();
    sendPage(res, 403, 'Refused', 'refused');
  };
}

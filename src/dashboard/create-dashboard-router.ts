import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { recordTokenAttempt } from '../http';
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
} from './render-page';
import { registerWaiverPages } from './waiver-pages';

/** The dashboard at /ui: ADMIN_TOKEN buys a signed session cookie, every POST carries a CSRF token, and no script runs. */
export function createDashboardRouter(options: DashboardOptions): Router {
  const router = express.Router();
  // No scripts, no framing, no caching, no referrer.
  router.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': DASHBOARD_CSP,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
    });
    next();
  });
  if (!options.adminToken) {
    router.use((_req, res) => sendPage(res, 404, 'Dashboard off', 'dashboard-off'));
    return router;
  }

  const keys = createSessionKeys(options.adminToken);
  const deps: DashboardDeps = { options, keys };
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const readSession = (req: Request) => keys.verify(readCookie(req.get('cookie'), SESSION_COOKIE), options.clock.now());
  const requireCsrf = (req: Authed, res: Response, next: NextFunction) => {
    if (keys.verifyCsrf(req.session!, (req.body as Record<string, unknown> | undefined)?.csrf)) return next();
    sendPage(res, 403, 'Refused', 'refused');
  };
  const attempts = { ...options, throttle: options.throttle ?? createAuthThrottle() };

  router.get('/login', (req, res) => {
    if (readSession(req)) return res.redirect(303, '/ui');
    sendPage(res, 200, 'Log in', 'login');
  });
  // Failures are slowed down per address; the token is checked first: the right one is always accepted.
  router.post('/login', form, async (req, res) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    if (!(await recordTokenAttempt(attempts, req, keys.verifyAdminToken(token), 'dashboard: failed login')))
      return sendPage(res, 401, 'Log in', 'login', { error: 'That is not the admin token.' });
    const { cookie } = keys.issue(options.clock.now());
    res.cookie(SESSION_COOKIE, cookie, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/ui', maxAge: SESSION_TTL_MS });
    options.logger.info({ ip: req.ip }, 'dashboard: logged in');
    res.redirect(303, '/ui');
  });
  // Everything below needs a session (as `req.session`); a GET without one goes to the login form.
  router.use((req: Authed, res, next) => {
    req.session = readSession(req);
    if (req.session) return next();
    if (req.method === 'GET') return res.redirect(303, '/ui/login');
    sendPage(res, 401, 'Log in', 'login', { error: 'Your session has ended: log in again.' });
  });
  router.post('/logout', form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: '/ui', httpOnly: true, sameSite: 'strict' });
    res.redirect(303, '/ui/login');
  });
  registerDeliveryPages(router, deps, form, requireCsrf);
  if (options.waivers) registerWaiverPages(router, { ...deps, book: options.waivers }, requireCsrf);
  return router;
}

import express, { type Request, type Response, type Router } from 'express';
import { RelayError } from '../shared';
import type { AppDeps } from './app-deps';
import { verifyBearerToken } from './admin-guard';

/** GET /healthz, /readyz (503 naming the failing part) and /metrics (behind METRICS_TOKEN when set); never cached. */
export function createObserveRouter(options: Pick<AppDeps, 'readiness' | 'metrics' | 'config'>): Router {
  const { metricsToken } = options.config.observe;
  const router = express.Router();
  router.use(['/healthz', '/readyz', '/metrics'], (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  router.get('/healthz', (_req, res) => res.json({ status: 'ok' }));

  // Details (hosts, a server's error text) only with METRICS_TOKEN or ADMIN_TOKEN: a probe needs the status and failing names.
  const detailTokens = [metricsToken, options.config.admin.token].filter((t): t is string => t !== undefined);
  router.get('/readyz', async (req: Request, res: Response) => {
    const readiness = await options.readiness();
    const authorization = req.get('authorization');
    const detailed = detailTokens.some((token) => verifyBearerToken(authorization, token));
    res.status(readiness.ready ? 200 : 503).json({
      status: readiness.ready ? 'ready' : 'not ready',
      ...(readiness.ready ? {} : { failing: readiness.failing }),
      smtp: readiness.smtp,
      ...(detailed ? { checks: readiness.checks } : {}),
    });
  });

  router.get('/metrics', async (req: Request, res: Response) => {
    if (metricsToken !== undefined && !verifyBearerToken(req.get('authorization'), metricsToken)) {
      res.set('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new RelayError('UNAUTHORIZED', { message: 'GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.' });
    }
    const text = await options.metrics.render();
    res.set('Content-Type', options.metrics.contentType).send(text);
  });
  return router;
}

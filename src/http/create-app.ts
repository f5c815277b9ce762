import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import type { Config } from '../config';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import { createAdminRouter } from './admin-route';
import { createErrorHandler, notFound, toRelayError } from './error-handler';
import { createObserveRouter, type ObserveRoutesOptions } from './observe-routes';
import { createRequestLogger } from './request-log';
import { createWebhookGuards } from './webhook-guards';
import type { WebhookOutcome } from '../webhook';
import { createWebhookRouter } from './webhook-route';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webhook'> & Partial<Pick<Config, 'admin' | 'secretValues'>>;
  store: Store;
  clock: Clock;
  logger: Logger;
  onQueued?: (id: number) => void;
  /** Called after an operator requeued deliveries through the admin API. */
  onRequeued?: () => void;
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
  /** The dashboard, mounted at /ui. */
  dashboard?: Router;
  /** /readyz and /metrics; without it only /healthz is served. */
  observe?: ObserveRoutesOptions;
}

/** Builds the express app. It never listens: the entry point (or a test) does. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.http.trustProxy);
  app.set('strict routing', false);

  app.use(createRequestLogger(deps.logger));

  const guards = createWebhookGuards({
    allowedIps: deps.config.webhook.allowedIps,
    rateLimit: deps.config.webhook.rateLimit,
    logger: deps.logger,
    clock: deps.clock,
  });
  if (guards.length > 0) app.post(deps.config.webhook.path, ...guards);

  app.use(
    createWebhookRouter({
      path: deps.config.webhook.path,
      secrets: deps.config.webhook.secrets,
      maxBytes: deps.config.webhook.maxBytes,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      onQueued: deps.onQueued,
      onOutcome: (outcome) => {
        deps.onWebhookOutcome?.(outcome);
      },
    }),
  );

  // After the webhook: the route NetBox waits on is matched first.
  if (deps.observe) {
    app.use(createObserveRouter(deps.observe));
  } else {
    app.get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    });
  }

  if (deps.dashboard) app.use('/ui', deps.dashboard);

  // Requests the webhook route refused (401, 413, 415, 422, 503 …) count as rejected deliveries.
  app.use(deps.config.webhook.path, (error: unknown, req: Request, _res: Response, next: NextFunction) => {
    if (req.method === 'POST') deps.onWebhookOutcome?.({ outcome: 'rejected', code: toRelayError(error).code });
    next(error);
  });
  app.use(
    createAdminRouter({
      token: deps.config.admin?.token,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      secrets: deps.config.secretValues,
      onRequeued: deps.onRequeued,
    }),
  );

  app.use(notFound);
  app.use(createErrorHandler(deps.logger));
  return app;
}

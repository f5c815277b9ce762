import express, { type Express } from 'express';
import type { Config } from '../config';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import { createAdminRouter } from './admin-route';
import { createErrorHandler, notFound } from './error-handler';
import { createWebhookGuards } from './webhook-guards';
import { createWebhookRouter, type WebhookOutcome } from './webhook-route';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webhook'> & Partial<Pick<Config, 'admin' | 'secretValues'>>;
  store: Store;
  clock: Clock;
  logger: Logger;
  onQueued?: (id: number) => void;
  /** Called after an operator requeued deliveries through the admin API. */
  onRequeued?: () => void;
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
}

/** Builds the express app. It never listens: the entry point (or a test) does. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.http.trustProxy);
  app.set('strict routing', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  const guards = createWebhookGuards({ allowedIps: deps.config.webhook.allowedIps, rateLimit: deps.config.webhook.rateLimit, logger: deps.logger });
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

import express, { type Express } from 'express';
import type { Config } from '../config';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import { createErrorHandler, notFound } from './error-handler';
import { createWebhookRouter, type WebhookOutcome } from './webhook-route';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webhook'>;
  store: Store;
  clock: Clock;
  logger: Logger;
  onQueued?: (id: number) => void;
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

  app.use(notFound);
  app.use(createErrorHandler(deps.logger));
  return app;
}

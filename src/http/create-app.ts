import express, { type Express } from 'express';
import { createAdminRouter } from './admin-route';
import type { AppDeps } from './app-deps';
import { createErrorHandler, notFound } from './error-handler';
import { createObserveRouter } from './observe-routes';
import { createRequestLogger } from './request-log';
import { createWebhookRouter } from './webhook-route';

/** Builds the express app. It never listens: the entry point (or a test) does. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.http.trustProxy);

  app.use(createRequestLogger(deps.logger));

  // One router per NetBox source: a wrong signature on one path says nothing about another.
  for (const source of deps.config.sources) app.use(createWebhookRouter({ ...deps, ...deps.config.webhook, source }));

  // After the webhook: the route NetBox waits on is matched first.
  app.use(createObserveRouter(deps));
  app.use('/ui', deps.dashboard);
  app.use(createAdminRouter(deps));

  app.use(notFound);
  app.use(createErrorHandler(deps.logger));
  return app;
}

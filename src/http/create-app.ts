import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Config, SourceConfig } from '../config';
import { type ActivityCounter, type AuthThrottle, type Clock, type Logger } from '../shared';
import type { Store } from '../store';
import { createAdminRouter, type AdminRouteOptions } from './admin-route';
import { createErrorHandler, notFound, toRelayError } from './error-handler';
import { createObserveRouter, type ObserveRoutesOptions } from './observe-routes';
import { createRequestLogger } from './request-log';
import type { WebhookOutcome } from '../webhook';
import { createWebhookRouter } from './webhook-route';
import { createWaiversRouter } from './waivers-route';
import type { WaiverBook } from '../waivers';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webhook' | 'sources' | 'admin' | 'secretValues'>;
  store: Store;
  clock: Clock;
  logger: Logger;
  onQueued: (id: number) => void;
  /** Kicked when an operator requeues deliveries through the admin API; its try-now resumes a paused or held queue. */
  worker: NonNullable<AdminRouteOptions['worker']>;
  onWebhookOutcome: (outcome: WebhookOutcome) => void;
  /** Counts the webhooks from their arrival at a webhook path until their answer is sent (the worker yields to them). */
  webhooksInFlight: ActivityCounter;
  dashboard: RequestHandler;
  observe: ObserveRoutesOptions;
  /** Accepted exceptions: the admin API's `/api/waivers`. */
  waivers: WaiverBook;
  /** Slows down wrong admin tokens per address; the dashboard's login shares it. */
  throttle: AuthThrottle;
  sleep?: (ms: number) => Promise<void>;
}

/** Builds the express app. It never listens: the entry point (or a test) does. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.http.trustProxy);

  app.use(createRequestLogger(deps.logger));

  for (const source of deps.config.sources) mountSourceWebhook(app, deps, source);

  // After the webhook: the route NetBox waits on is matched first.
  app.use(createObserveRouter(deps.observe));
  app.use('/ui', deps.dashboard);

  // Requests a webhook route refused (401, 403, 413, 415, 422, 429, 503 …) count as rejected deliveries of its source.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const source = res.locals.webhookSource as string | undefined;
    if (source !== undefined) deps.onWebhookOutcome({ outcome: 'rejected', code: toRelayError(error).code, source });
    next(error);
  });
  const admin = { ...deps, token: deps.config.admin?.token };
  app.use(createAdminRouter({ ...admin, secrets: deps.config.secretValues }));
  app.use(createWaiversRouter({ ...admin, book: deps.waivers }));

  app.use(notFound);
  app.use(createErrorHandler(deps.logger));
  return app;
}

/**
 * One NetBox source's webhook: its path marked (for the rejected count), its own address allow-list
 * and the shared rate limit, then its own secrets. A wrong signature on one path says nothing about another.
 */
function mountSourceWebhook(app: Express, deps: AppDeps, source: SourceConfig): void {
  app.post(source.path, (_req: Request, res: Response, next: NextFunction) => {
    res.locals.webhookSource = source.name;
    // 'close' follows every answer, and a connection that went away before one.
    res.once('close', deps.webhooksInFlight.begin());
    next();
  });
  const { maxBytes, rateLimit } = deps.config.webhook;
  app.use(createWebhookRouter({ ...deps, source, maxBytes, rateLimit }));
}

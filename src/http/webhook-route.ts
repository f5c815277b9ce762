import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { SourceConfig } from '../config';
import { RelayError, type Logger } from '../shared';
import { buildNewDelivery, StorageUnavailableError } from '../store';
import { parseDelivery, verifySignature } from '../webhook';
import type { AppDeps } from './app-deps';
import { toRelayError } from './error-handler';
import { requestLogger } from './request-log';
import { createWebhookGuards, type WebhookGuardOptions } from './webhook-guards';

export interface WebhookRouteOptions
  extends WebhookGuardOptions, Pick<AppDeps, 'store'>, Partial<Pick<AppDeps, 'onQueued' | 'onWebhookOutcome' | 'webhooksInFlight'>> {
  /** The NetBox source whose path this is, with its guards, secrets and NETBOX_URL (with the report's base path, the series it belongs to). */
  source: Pick<SourceConfig, 'name' | 'path' | 'allowedIps' | 'secrets' | 'netbox'>;
  maxBytes: number;
}

/** Seconds a client should wait before retrying after a 503 (storage could not commit). */
const STORAGE_RETRY_AFTER_SECONDS = 30;

/**
 * POST <path> (a trailing slash is accepted): counted in flight until answered, the source's guards (its own address
 * allow-list, the shared rate limit), then checks the content type, reads the raw body within the size limit, verifies
 * X-Hook-Signature on those exact bytes with the source's own secrets, parses, stores, and only then answers 202.
 * No SMTP or NetBox call happens here: NetBox ≤ 4.6 waits for us without a timeout.
 */
export function createWebhookRouter(options: WebhookRouteOptions): Router {
  const { name: source, path, secrets } = options.source;
  const router = express.Router({ strict: false });
  const rawBody = express.raw({ type: () => true, limit: options.maxBytes, inflate: false });

  const track = (_req: Request, res: Response, next: NextFunction) => {
    // 'close' follows every answer, and a connection that went away before one.
    if (options.webhooksInFlight) res.once('close', options.webhooksInFlight.begin());
    next();
  };

  router.post(path, track, ...createWebhookGuards(options), requireJson, rawBody, async (req: Request, res: Response) => {
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const log = (): Logger => requestLogger(req, options.logger);
    if (secrets.length > 0) {
      const verdict = verifySignature(body, req.get('x-hook-signature'), secrets);
      if (verdict !== 'valid') throw new RelayError(verdict === 'missing' ? 'SIGNATURE_MISSING' : 'SIGNATURE_INVALID');
    }
    const delivery = parseDelivery(body, source);
    if (delivery.kind === 'ignored') {
      if (options.logger.isLevelEnabled('info')) log().info({ reason: delivery.reason, source }, 'webhook ignored');
      options.onWebhookOutcome?.({ outcome: 'ignored', reason: delivery.reason, source });
      res.status(200).json({ status: 'ignored', reason: delivery.reason });
      return;
    }
    let result;
    try {
      result = await options.store.insertDelivery(
        buildNewDelivery(delivery, {
          body,
          sender: req.ip ?? req.socket.remoteAddress ?? 'unknown',
          receivedAt: options.clock.now(),
          netboxUrl: options.source.netbox.url,
        }),
      );
    } catch (error) {
      if (error instanceof StorageUnavailableError) {
        log().error({ code: error.code, err: error.message }, 'delivery NOT stored: answered 503 so the sender can retry');
        res.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
        throw new RelayError('STORAGE_UNAVAILABLE', { cause: error });
      }
      throw error;
    }
    const outcome = result.duplicate ? 'duplicate' : 'queued';
    res.locals.deliveryId = result.id;
    if (options.logger.isLevelEnabled('info'))
      log().info(
        { deliveryId: result.id, reportId: delivery.report.id, dedupKey: delivery.dedupKey, source, outcome },
        result.duplicate ? 'duplicate delivery: already stored, not mailed again' : 'delivery stored',
      );
    options.onWebhookOutcome?.({ outcome, id: result.id, reportId: delivery.report.id, source });
    res.status(result.duplicate ? 200 : 202).json({ status: outcome, id: result.id });
    if (!result.duplicate) options.onQueued?.(result.id);
  });
  // Requests this route refused (401, 403, 413, 415, 422, 429, 503 …) count as rejected deliveries of its source.
  router.use((error: unknown, _req: Request, _res: Response, next: NextFunction) => {
    options.onWebhookOutcome?.({ outcome: 'rejected', code: toRelayError(error).code, source });
    next(error);
  });
  return router;
}

/** 415 before reading the body: only JSON (`application/json` with any parameters, or `+json`). */
function requireJson(req: Request, _res: Response, next: (error?: unknown) => void): void {
  if (req.is(['application/json', '+json'])) return next();
  next(
    new RelayError('UNSUPPORTED_MEDIA_TYPE', {
      message: `The body must be application/json, not ${req.get('content-type') ?? 'untyped'}.`,
    }),
  );
}

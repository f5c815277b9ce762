import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type * as RateLimitModule from 'express-rate-limit';
import ipaddr from 'ipaddr.js';
import type { SourceConfig } from '../config';
import { RelayError, type Logger } from '../shared';
import { buildNewDelivery, StorageUnavailableError } from '../store';
import { DEFAULT_SOURCE_NAME, parseDelivery, verifySignature } from '../webhook';
import type { AppDeps } from './app-deps';
import { toRelayError } from './error-handler';

export interface WebhookRouteOptions
  extends Pick<AppDeps, 'store' | 'clock' | 'logger'>, Partial<Pick<AppDeps, 'onQueued' | 'onWebhookOutcome' | 'webhooksInFlight'>> {
  /** The NetBox source whose path this is: its allowed CIDR ranges (undefined: all), secrets and NETBOX_URL. */
  source: Pick<SourceConfig, 'name' | 'path' | 'allowedIps' | 'secrets' | 'netbox'>;
  maxBytes: number;
  /** Requests per minute per client address (WEBHOOK_RATE_LIMIT); 0: no limit. */
  rateLimit: number;
}

/** Seconds a client should wait before retrying after a 503 (storage could not commit). */
const STORAGE_RETRY_AFTER_SECONDS = 30;

/** WEBHOOK_RATE_LIMIT counts a client's requests over this window: "per minute" is what operators reason in. */
const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * POST <path>: guards, content type, raw body within the limit, X-Hook-Signature on those bytes, parse, store, then 202.
 * No mail or NetBox call happens here: NetBox ≤ 4.6 waits for us without a timeout.
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
    const log = (): Logger => options.logger.child({ reqId: res.locals.reqId as string | undefined });
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

/** Before a byte of the body is read: the address allow-list (403) and rate limit (429); `req.ip` honours TRUST_PROXY. */
function createWebhookGuards(options: WebhookRouteOptions): RequestHandler[] {
  const guards: RequestHandler[] = [];
  const { name, allowedIps } = options.source;
  if (allowedIps) {
    const ranges = allowedIps.map((cidr) => ipaddr.parseCIDR(cidr));
    // Where the allow-list was configured, named in the refusal's log line.
    const setting = name === DEFAULT_SOURCE_NAME ? 'WEBHOOK_ALLOWED_IPS' : `SOURCES_FILE source ${name} allowed_ips`;
    guards.push((req: Request, _res: Response, next: NextFunction) => {
      // IPv4, IPv6 or IPv4-mapped IPv6.
      const ip = req.ip && ipaddr.isValid(req.ip) ? ipaddr.process(req.ip) : undefined;
      if (ip && ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits))) return next();
      options.logger.warn({ ip: req.ip }, `webhook refused: client address not in ${setting}`);
      next(new RelayError('FORBIDDEN_ADDRESS'));
    });
  }
  if (options.rateLimit > 0) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only with WEBHOOK_RATE_LIMIT (off by default)
    const { rateLimit } = require('express-rate-limit') as typeof RateLimitModule;
    guards.push(
      rateLimit({
        windowMs: RATE_LIMIT_WINDOW_MS,
        limit: options.rateLimit,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        // Addresses come from req.ip, which already honours TRUST_PROXY; the library need not warn about it.
        validate: { xForwardedForHeader: false, trustProxy: false },
        handler: (req: Request, res: Response, next: NextFunction) => {
          const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
          const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - options.clock.now()) / 1000)) : RATE_LIMIT_WINDOW_MS / 1000;
          res.set('Retry-After', String(seconds));
          options.logger.warn({ ip: req.ip }, 'webhook refused: rate limit reached for this client address');
          next(new RelayError('RATE_LIMITED'));
        },
      }),
    );
  }
  return guards;
}

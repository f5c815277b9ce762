import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type * as RateLimitModule from 'express-rate-limit';
import ipaddr from 'ipaddr.js';
import type { SourceConfig } from '../config';
import { RelayError, type Clock, type Logger } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';

export interface WebhookGuardOptions {
  /** The source whose path is guarded: its CIDR ranges allowed to post (undefined: every address). */
  source: Pick<SourceConfig, 'name' | 'allowedIps'>;
  /** Requests per minute per client address (WEBHOOK_RATE_LIMIT); 0: no limit. */
  rateLimit: number;
  logger: Logger;
  clock: Clock;
}

/** WEBHOOK_RATE_LIMIT counts a client's requests over this window: "per minute" is what operators reason in. */
const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * What stands in front of the webhook before a byte of the body is read: the client address
 * allow-list (403 FORBIDDEN_ADDRESS) and the per-address rate limit (429 RATE_LIMITED with
 * Retry-After). The client address is `req.ip`, so X-Forwarded-For counts only as TRUST_PROXY allows.
 */
export function createWebhookGuards(options: WebhookGuardOptions): RequestHandler[] {
  const guards: RequestHandler[] = [];
  const { name, allowedIps } = options.source;
  if (allowedIps) {
    const ranges = allowedIps.map((cidr) => ipaddr.parseCIDR(cidr));
    // Where the allow-list was configured, named in the refusal's log line.
    const setting = name === DEFAULT_SOURCE_NAME ? 'WEBHOOK_ALLOWED_IPS' : `SOURCES_FILE source ${name} allowed_ips`;
    guards.push((req: Request, _res: Response, next: NextFunction) => {
      if (isAllowed(req.ip, ranges)) return next();
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

/** Whether `ip` (IPv4, IPv6 or IPv4-mapped IPv6) falls in one of `ranges`. */
function isAllowed(ip: string | undefined, ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  if (!ip || !ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  return ranges.some(([range, bits]) => addr.kind() === range.kind() && addr.match(range, bits));
}

import { setTimeout as wait } from 'node:timers/promises';
import type { NextFunction, Request, Response } from 'express';
import { RelayError, type AuthThrottle, type Clock, type Logger } from '../shared';
import { verifyBearerToken } from './bearer-token';

export interface AdminGuardOptions {
  /** ADMIN_TOKEN; undefined: 404 ADMIN_DISABLED. */
  token?: string;
  logger: Logger;
  clock: Clock;
  /** Shared with the dashboard's login: wrong tokens from one address are slowed down wherever they are tried. */
  throttle: AuthThrottle;
  /** Waits before a wrong token is answered; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The admin API's door: `Authorization: Bearer <ADMIN_TOKEN>` on every call, nothing reachable without a
 * configured token; wrong tokens are answered more and more slowly per address; answers are never cached.
 */
export function createAdminGuard(options: AdminGuardOptions) {
  const sleep = options.sleep ?? wait;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (options.token === undefined) return next(new RelayError('ADMIN_DISABLED'));
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    if (!verifyBearerToken(req.get('authorization'), options.token)) {
      const delayMs = options.throttle.recordFailure(address, options.clock.now());
      options.logger.warn({ ip: req.ip, method: req.method, path: req.path, delayMs }, 'admin API: missing or wrong bearer token');
      res.set('WWW-Authenticate', 'Bearer realm="compliance-relay"');
      if (delayMs === 0) return next(new RelayError('UNAUTHORIZED'));
      sleep(delayMs).then(() => next(new RelayError('UNAUTHORIZED')), next);
      return;
    }
    options.throttle.recordSuccess(address);
    res.set('Cache-Control', 'no-store');
    next();
  };
}

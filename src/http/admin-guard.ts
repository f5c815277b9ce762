import { setTimeout as wait } from 'node:timers/promises';
import type { NextFunction, Request, Response } from 'express';
import { RelayError, type AuthThrottle, type Clock, type Logger } from '../shared';
import { verifyBearerToken } from './bearer-token';

/** Where tries of the admin token are counted: the admin API and the dashboard's login share the throttle. */
export interface TokenAttempts {
  throttle: AuthThrottle;
  clock: Clock;
  logger: Logger;
  /** Waits before a wrong token is answered; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Counts one try of the admin token from the request's address: the right one clears the address's failures; a wrong
 * one is logged (with `fields`) and resolves only after the throttle's delay for that address. Resolves to `ok`.
 */
export async function recordTokenAttempt(
  attempts: TokenAttempts,
  req: Request,
  ok: boolean,
  message: string,
  fields = {},
): Promise<boolean> {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (ok) {
    attempts.throttle.recordSuccess(address);
    return true;
  }
  const delayMs = attempts.throttle.recordFailure(address, attempts.clock.now());
  attempts.logger.warn({ ip: req.ip, ...fields, delayMs }, message);
  if (delayMs > 0) await (attempts.sleep ?? wait)(delayMs);
  return false;
}

export interface AdminGuardOptions extends TokenAttempts {
  /** ADMIN_TOKEN; undefined: 404 ADMIN_DISABLED. */
  token?: string;
}

/**
 * The admin API's door: `Authorization: Bearer <ADMIN_TOKEN>` on every call, nothing reachable without a
 * configured token; wrong tokens are answered more and more slowly per address; answers are never cached.
 */
export function createAdminGuard(options: AdminGuardOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (options.token === undefined) throw new RelayError('ADMIN_DISABLED');
    const ok = verifyBearerToken(req.get('authorization'), options.token);
    const fields = { method: req.method, path: req.path };
    if (!(await recordTokenAttempt(options, req, ok, 'admin API: missing or wrong bearer token', fields))) {
      res.set('WWW-Authenticate', 'Bearer realm="compliance-relay"');
      throw new RelayError('UNAUTHORIZED');
    }
    res.set('Cache-Control', 'no-store');
    next();
  };
}

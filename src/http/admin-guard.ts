import { createHash, timingSafeEqual } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import type { NextFunction, Request, Response } from 'express';
import { RelayError } from '../shared';
import type { AppDeps } from './app-deps';

/** True when `a` and `b` are equal. Both are hashed first, so the comparison is constant-time whatever their lengths (no early exit). */
export function isSameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function verifyBearerToken(header: string | undefined, expected: string): boolean {
  const m = /^Bearer[ ]+(\S{1,1024})\s*$/i.exec(header ?? '');
  return m !== null && isSameSecret(m[1], expected);
}

type TokenAttemptOptions = Pick<AppDeps, 'logger' | 'clock' | 'throttle' | 'sleep'>;

/** The admin API's door: `Bearer <ADMIN_TOKEN>` (404 without one configured), wrong tokens slowed per address, never cached. */
export function createAdminGuard(options: TokenAttemptOptions & Pick<AppDeps, 'config'>) {
  const { token } = options.config.admin;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (token === undefined) throw new RelayError('ADMIN_DISABLED');
    const ok = verifyBearerToken(req.get('authorization'), token);
    if (!(await recordTokenAttempt(options, req, ok, 'admin API: missing or wrong bearer token'))) {
      res.set('WWW-Authenticate', 'Bearer realm="compliance-relay"');
      throw new RelayError('UNAUTHORIZED');
    }
    res.set('Cache-Control', 'no-store');
    next();
  };
}

/** One try of the admin token from the request's address: the right one clears its failures, a wrong one waits the throttle's delay. */
export async function recordTokenAttempt(options: TokenAttemptOptions, req: Request, ok: boolean, message: string) {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (ok) options.throttle.recordSuccess(address);
  else {
    const delayMs = options.throttle.recordFailure(address, options.clock.now());
    options.logger.warn({ ip: req.ip, method: req.method, path: req.path, delayMs }, message);
    if (delayMs > 0) await (options.sleep ?? wait)(delayMs);
  }
  return ok;
}

import type { NextFunction, Request, Response } from 'express';
import { RelayError, type Logger } from '../shared';
import { verifyBearerToken } from './bearer-token';

/**
 * The admin API's door: `Authorization: Bearer <ADMIN_TOKEN>` on every call; without a configured
 * token the API is disabled (404 ADMIN_DISABLED), so nothing is reachable by default. Answers are never cached.
 */
export function createAdminGuard(options: { token?: string; logger: Logger }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (options.token === undefined) return next(new RelayError('ADMIN_DISABLED'));
    if (!verifyBearerToken(req.get('authorization'), options.token)) {
      options.logger.warn({ ip: req.ip, method: req.method, path: req.path }, 'admin API: missing or wrong bearer token');
      res.set('WWW-Authenticate', 'Bearer realm="compliance-relay"');
      return next(new RelayError('UNAUTHORIZED'));
    }
    res.set('Cache-Control', 'no-store');
    next();
  };
}

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../shared';

/** A caller's X-Request-Id is reused only when it is short and plain (it goes into logs and a header). */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths polled by probes and scrapers: logged at debug only, or they would drown everything else. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One log line per request (method, path, status, time, client address) with a request id that is
 * echoed as X-Request-Id and bound to `req.log`, so the lines a handler writes carry it too.
 * Headers, bodies and query strings are never logged: they may hold signatures, tokens or cookies.
 * A handler that stores a delivery sets `res.locals.deliveryId`, which the request line then shows.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  const middleware = pinoHttp({
    logger,
    quietReqLogger: true,
    quietResLogger: true,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel(req, res, err) {
      if (err || res.statusCode >= 500) return 'error';
      if (PROBE_PATHS.has(pathOf(urlOf(req)))) return 'debug';
      return res.statusCode >= 400 ? 'warn' : 'info';
    },
    customSuccessMessage: (req, res) => `${req.method} ${pathOf(urlOf(req))} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${pathOf(urlOf(req))} ${res.statusCode}`,
    customSuccessObject: (req, res, value) => describe(req, res, value),
    customErrorObject: (req, res, _error, value) => describe(req, res, value),
  });
  return middleware as unknown as RequestHandler;
}

function describe(req: IncomingMessage, res: ServerResponse, value: Record<string, unknown>): Record<string, unknown> {
  const locals = (res as unknown as { locals?: { deliveryId?: number } }).locals;
  return {
    method: req.method,
    path: pathOf(urlOf(req)),
    status: res.statusCode,
    responseTimeMs: value.responseTime,
    ip: (req as unknown as { ip?: string }).ip ?? req.socket?.remoteAddress,
    ...(locals?.deliveryId !== undefined ? { deliveryId: locals.deliveryId } : {}),
  };
}

/** express rewrites req.url inside mounted routers; originalUrl is what the client asked for. */
function urlOf(req: IncomingMessage): string | undefined {
  return (req as { originalUrl?: string }).originalUrl ?? req.url;
}

/** The path without its query string. */
function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return (q === -1 ? raw : raw.slice(0, q)).slice(0, 300);
}

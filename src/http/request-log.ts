import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../shared';

/** A caller's X-Request-Id is reused only when it is short and plain (it goes into logs and a header). */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths polled by probes and scrapers: logged at debug only, or they would drown everything else. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One log line per request with a request id echoed as X-Request-Id (and left in `res.locals.reqId` for handlers' lines);
 * never headers, bodies or query strings. Built lazily: this runs on every webhook's acknowledgement.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const startedAt = performance.now();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    res.locals.reqId = id;
    // Node's request timeout destroys the socket with ERR_HTTP_REQUEST_TIMEOUT, the only place the reason shows.
    let cutBy: string | undefined;
    const onSocketError = (error: NodeJS.ErrnoException) => {
      cutBy ??= error.code;
    };
    req.socket?.on('error', onSocketError);
    // 'close' follows 'finish' on a completed response and also fires when the client went away.
    res.once('close', () => {
      req.socket?.off('error', onSocketError);
      const path = (req.originalUrl ?? req.url ?? '/').split('?', 1)[0].slice(0, 300);
      const answered = res.writableFinished;
      // No answer went out: the status on `res` is express's default, not something the client saw.
      const cut = answered ? undefined : describeCut(cutBy, req.complete);
      const level = chooseLevel(res.statusCode, answered, cut !== undefined, path);
      if (!logger.isLevelEnabled(level)) return;
      const deliveryId = (res.locals as { deliveryId?: number } | undefined)?.deliveryId;
      logger.child({ reqId: id })[level](
        {
          method: req.method,
          path,
          ...(cut ? { outcome: cut.outcome, statusSent: false } : { status: res.statusCode }),
          responseTimeMs: Math.round(performance.now() - startedAt),
          ip: req.ip ?? req.socket?.remoteAddress,
          ...(deliveryId !== undefined ? { deliveryId } : {}),
        },
        cut ? `${req.method} ${path} ${cut.text}: no status sent` : `${req.method} ${path} ${res.statusCode}`,
      );
    });
    next();
  };
}

/** A request without an answer: cut by Node's request timeout, or left by the client before or after sending it all. */
function describeCut(socketError: string | undefined, requestComplete: boolean): { outcome: string; text: string } {
  if (socketError === 'ERR_HTTP_REQUEST_TIMEOUT') return { outcome: 'timed out', text: 'timed out before the request was complete' };
  if (!requestComplete) return { outcome: 'client closed', text: 'closed by the client before the request was complete' };
  return { outcome: 'client closed', text: 'closed by the client before the answer was sent' };
}

/** A 5xx sent is an error and a cut request a warning; otherwise a probe is debug, a 4xx a warning, the rest info. */
function chooseLevel(status: number, answered: boolean, cut: boolean, path: string): 'error' | 'warn' | 'debug' | 'info' {
  if (status >= 500 && answered) return 'error';
  if (cut) return 'warn';
  if (PROBE_PATHS.has(path)) return 'debug';
  return status >= 400 ? 'warn' : 'info';
}

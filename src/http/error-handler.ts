import type { NextFunction, Request, Response } from 'express';
import { RelayError, type Logger } from '../shared';

const BODY_PARSER_ERRORS: Record<string, RelayError['code']> = {
  'entity.too.large': 'PAYLOAD_TOO_LARGE',
  'entity.parse.failed': 'BODY_NOT_JSON',
  'encoding.unsupported': 'UNSUPPORTED_ENCODING',
  'charset.unsupported': 'UNSUPPORTED_MEDIA_TYPE',
  'request.aborted': 'REQUEST_ABORTED',
  'request.size.invalid': 'REQUEST_ABORTED',
};

/** The last middleware: every error becomes `{"error": {…}}` with the catalogue's status; unknown ones are logged, answered INTERNAL. */
export function createErrorHandler(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const relayError = toRelayError(error);
    // A body cut off with its connection can get no answer; the request log says what happened, once.
    if (relayError.code === 'REQUEST_ABORTED' && req.socket?.destroyed) {
      res.destroy();
      return;
    }
    if (relayError.code === 'INTERNAL') logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    else if (relayError.status !== 404)
      logger.warn({ code: relayError.code, method: req.method, path: req.path, ip: req.ip, issues: relayError.issues }, relayError.message);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Once we answer early (413, 415), the rest of the body is not read: close the connection.
    if (relayError.status === 413 || relayError.status === 415) res.set('Connection', 'close');
    const { code, message, retryable, issues } = relayError;
    res.status(relayError.status).json({ error: { code, message, retryable, ...(issues ? { issues } : {}) } });
  };
}

export function toRelayError(error: unknown): RelayError {
  if (error instanceof RelayError) return error;
  const type = (error as { type?: unknown })?.type;
  if (typeof type === 'string' && BODY_PARSER_ERRORS[type]) return new RelayError(BODY_PARSER_ERRORS[type], { cause: error });
  return new RelayError('INTERNAL', { cause: error });
}

export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new RelayError('NOT_FOUND', { message: `No route for ${req.method} ${req.path}.` }));
}

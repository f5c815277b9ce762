import { TemplateError } from '../mail';
import { readFailureFacts, type FailureCatalogue } from '../shared';
import type { FailureClass } from './notifier';

/** Whether a failed send can succeed later, by the catalogue; a code outside it is `UNKNOWN` (never a metric label). */
export function classifyFailure(error: unknown, catalogue: FailureCatalogue): FailureClass {
  const err = (error ?? {}) as { code?: unknown; scope?: unknown; retryAfterMs?: unknown; message?: unknown; response?: unknown };
  // One line, with the server's answer when there is one; never a stack.
  const text = typeof err.message === 'string' ? err.message : String(error);
  const response = typeof err.response === 'string' && !text.includes(err.response) ? ` (${err.response})` : '';
  const message = `${text}${response}`.replace(/\s+/g, ' ').slice(0, 1000);
  if (error instanceof TemplateError) return buildFailureClass('TEMPLATE', message, catalogue);
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (code === undefined || !Object.hasOwn(catalogue, code))
    return buildFailureClass('UNKNOWN', code === undefined ? message : `${message} (code ${code.slice(0, 40)})`, catalogue);
  const failure = buildFailureClass(code, message, catalogue);
  // The transport's reading of this one error: an SMTP 421 is about the server, a 429 states its wait.
  if (err.scope === 'server' || err.scope === 'message') failure.scope = err.scope;
  if (typeof err.retryAfterMs === 'number' && err.retryAfterMs > 0) failure.retryAfterMs = err.retryAfterMs;
  return failure;
}

/** A template or composition error: the same input fails the same way, so it is permanent; one without a code of its own is `RENDER`. */
export function classifyRenderFailure(error: unknown, catalogue: FailureCatalogue): FailureClass {
  const { code, ...classified } = classifyFailure(error, catalogue);
  return { ...classified, kind: 'permanent', code: code === 'UNKNOWN' ? 'RENDER' : code };
}

/** A failure of `code` as the relay's catalogue describes it. */
export function buildFailureClass(code: string, message: string, catalogue: FailureCatalogue): FailureClass {
  const facts = readFailureFacts(code, catalogue);
  return {
    kind: facts.retryable ? 'transient' : 'permanent',
    code,
    configProblem: facts.configProblem,
    scope: facts.scope,
    serverReachable: facts.serverReachable,
    message,
  };
}

/** The code a command or the health check shows for a failed check: the catalogue's, else the error's own (`EACCES`). */
export function readFailureCode(error: unknown, catalogue: FailureCatalogue): string {
  const { code } = classifyFailure(error, catalogue);
  if (code !== 'UNKNOWN') return code;
  const own = (error as { code?: unknown } | null)?.code;
  return typeof own === 'string' ? own : 'ERROR';
}

import { TemplateError } from '../mail';
import { isCertificateFailure, isFailureCode, RELAY_FAILURES, type FailureCatalogue, type FailureCode, type FailureFacts } from '../shared';
import { GRAPH_FAILURES, OAUTH2_FAILURES, SMTP_FAILURES } from './transport-failures';

/** A failed send as the retry policy reads it: its code, with the catalogue's facts of that code. */
export interface FailureClass extends Pick<FailureFacts, 'configProblem' | 'scope'>, Partial<Pick<FailureFacts, 'serverReachable'>> {
  kind: 'transient' | 'permanent';
  /** Stable code from the relay's catalogue (notify's FAILURE_CATALOGUE), stored with the delivery and used in metrics. */
  code: FailureCode;
  message: string;
  /** The server asked for this pause before the next try (Graph's Retry-After): the queue waits at least this long. */
  retryAfterMs?: number;
}

/**
 * Codes a notifier sets itself (OAuth2, Microsoft Graph): they are already the catalogue's word, and
 * win over the reply code nodemailer attaches (a refused XOAUTH2 login comes with 535).
 */
const NOTIFIER_CODES: ReadonlySet<FailureCode> = new Set([...Object.keys(OAUTH2_FAILURES), ...Object.keys(GRAPH_FAILURES)]);

/** The codes this classifier picks from: SMTP's, OAuth2's and Graph's, and the relay's own. */
const CLASSIFIED: FailureCatalogue = { ...SMTP_FAILURES, ...GRAPH_FAILURES, ...RELAY_FAILURES };

/**
 * SMTP replies about the service, not the message (RFC 5321 §3.8, §4.2.3): 421 "closing transmission channel".
 * A 451 answers one transaction (greylisting, a recipient's quota) and is retried for that message alone.
 */
const SERVER_REPLY_CODES = new Set([421]);

/**
 * The one place that decides whether a failed send can succeed later (alertmanager notify/retry_stage): it picks
 * the code, the catalogue says what it means. A code outside the catalogue is `UNKNOWN`, its own code kept in the
 * message only, so it can never become a metric label.
 */
export function classifyFailure(error: unknown): FailureClass {
  const err = (error ?? {}) as { code?: unknown; responseCode?: unknown; retryAfterMs?: unknown };
  const message = describe(error);
  if (error instanceof TemplateError) return buildFailureClass('TEMPLATE', message);
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (isFailureCode(code, CLASSIFIED) && NOTIFIER_CODES.has(code)) {
    const retryAfterMs = typeof err.retryAfterMs === 'number' && err.retryAfterMs > 0 ? err.retryAfterMs : undefined;
    return { ...buildFailureClass(code, message), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  const responseCode = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  // A refused login stays a login problem whatever reply code came with it (454 included).
  if (code === 'EAUTH' || code === 'ENOAUTH' || code === 'SMTP_TLS_REQUIRED') return buildFailureClass(code, message);
  // 530 "authentication required" (RFC 4954 §6) to MAIL FROM: the server wants a login before any mail.
  if (responseCode === 530) return buildFailureClass('ENOAUTH', message);
  // An untrusted certificate: nodemailer says ESOCKET (or ECONNECTION) and only the words tell; a server's
  // reply that mentions a certificate is still a reply.
  if (code === 'ETLS' || (isSocketCode(code) && responseCode === undefined && isCertificateFailure(message)))
    return buildFailureClass('ETLS', message);
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) {
    const retryAfterMs = parseStatedWaitMs(message);
    // A server that says when to come back (a rate limit) refuses every mail until then, not this one alone.
    const scope = SERVER_REPLY_CODES.has(responseCode) || retryAfterMs !== undefined ? 'server' : 'message';
    return { ...buildFailureClass('SMTP_4XX', message), scope, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) return buildFailureClass('SMTP_5XX', message);
  if (isFailureCode(code, CLASSIFIED)) return buildFailureClass(code, message);
  return buildFailureClass('UNKNOWN', code === undefined ? message : `${message} (code ${String(code).slice(0, 40)})`);
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * The wait an SMTP reply states, if it states one: "try again in 30 seconds", "retry after 2 minutes",
 * "please come back in 00:05:00" (milter-greylist). Most servers say only "try again later" (Gmail's 421 4.7.0,
 * Exchange Online's 451 4.7.500, Postfix's 450 4.7.1 "too much mail"): then nothing is guessed.
 */
function parseStatedWaitMs(reply: string): number | undefined {
  const text = reply.slice(0, 1000);
  const clock = /\bin\s+(\d{1,2}):([0-5]\d):([0-5]\d)\b/i.exec(text);
  if (clock) return ((Number(clock[1]) * 60 + Number(clock[2])) * 60 + Number(clock[3])) * 1000;
  const spoken =
    /\b(?:try again|retry|come back|resend|wait)\b[^.;]{0,20}?\b(\d{1,6})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b/i.exec(text);
  return spoken ? Number(spoken[1]) * UNIT_MS[spoken[2][0].toLowerCase()] : undefined;
}

/** A template or composition error: the same input fails the same way, so it is permanent; one without a code of its own is `RENDER`. */
export function classifyRenderFailure(error: unknown): FailureClass {
  const classified = classifyFailure(error);
  const failure: FailureClass = { ...classified, kind: 'permanent' };
  if (failure.code === 'UNKNOWN') failure.code = 'RENDER';
  return failure;
}

/** A failure of `code` as the catalogue describes it (`facts`: a transport's own code, outside SMTP's and Graph's). */
export function buildFailureClass(
  code: FailureCode,
  message: string,
  facts: FailureFacts = CLASSIFIED[code] ?? RELAY_FAILURES.UNKNOWN,
): FailureClass {
  return {
    kind: facts.retryable ? 'transient' : 'permanent',
    code,
    configProblem: facts.configProblem,
    scope: facts.scope,
    serverReachable: facts.serverReachable,
    message,
  };
}

/** The codes a TLS handshake's failure arrives with: nodemailer's socket and connection codes, Node's own (CERT_…), or none. */
function isSocketCode(code: string | undefined): boolean {
  return code === undefined || code === 'ESOCKET' || code === 'ECONNECTION' || !isFailureCode(code, CLASSIFIED);
}

/** A one-line description with the SMTP answer when there is one; never a stack. */
function describe(error: unknown): string {
  const err = error as { message?: unknown; response?: unknown };
  const message = typeof err?.message === 'string' ? err.message : String(error);
  const response = typeof err?.response === 'string' && !message.includes(err.response) ? ` (${err.response})` : '';
  return `${message}${response}`.replace(/\s+/g, ' ').slice(0, 1000);
}

/**
 * The code a command or the health check shows for a failed check: the catalogue's (so an expired certificate
 * reads `ETLS` everywhere, as it is stored), or the error's own when the catalogue has none (`EACCES`).
 */
export function readFailureCode(error: unknown): string {
  const { code } = classifyFailure(error);
  if (code !== 'UNKNOWN') return code;
  const own = (error as { code?: unknown } | null)?.code;
  return typeof own === 'string' ? own : 'ERROR';
}

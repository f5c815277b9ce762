import { buildFailureFacts, isCertificateFailure, type FailureCatalogue, type SecretMask } from '../shared';
import { OAUTH2_FAILURES } from './oauth2-settings';

const smtp = buildFailureFacts.bind(undefined, 'SMTP');
const ANSWERED = { answered: true };
/** An operator must act, and the queue waits for the fix however long it takes. */
const HELD = { held: true };

/** nodemailer's own codes where it has one; SMTP_4XX's scope depends on the reply ({@link readSmtpError}). */
export const SMTP_FAILURES: FailureCatalogue = {
  SMTP_4XX: smtp(true, 'message', 'The mail server refused the message for now (temporary 4xx).', ANSWERED),
  SMTP_5XX: smtp(false, 'message', 'The mail server refused the message for good (5xx).', ANSWERED),
  EENVELOPE: smtp(false, 'message', 'The mail server refused a sender or recipient address.', ANSWERED),
  EMESSAGE: smtp(false, 'message', 'The mail server refused the message content.', ANSWERED),
  ECONNECTION: smtp(true, 'server', 'The mail server could not be reached.'),
  ECONNREFUSED: smtp(true, 'server', 'The mail server refused the connection (is it running, is SMTP_URL right?).'),
  ECONNRESET: smtp(true, 'server', 'The mail server dropped the connection.'),
  ETIMEDOUT: smtp(true, 'server', 'The mail server did not answer in time.'),
  ESOCKET: smtp(true, 'server', 'The connection to the mail server failed.'),
  EDNS: smtp(true, 'server', "The mail server's name could not be resolved."),
  EPIPE: smtp(true, 'server', 'The mail server closed the connection while the message was sent.'),
  EHOSTUNREACH: smtp(true, 'server', 'The mail server is unreachable from here (no route to the host).'),
  ENETUNREACH: smtp(true, 'server', 'The network of the mail server is unreachable.'),
  EAI_AGAIN: smtp(true, 'server', "The mail server's name could not be resolved now (DNS)."),
  EPROTOCOL: smtp(true, 'message', 'The mail server answered something SMTP does not allow.'),
  ESTREAM: smtp(true, 'message', 'The message could not be streamed to the mail server.'),
  // Only an operator's fix helps: every mail would fail alike until then, so the queue waits and probes now and then.
  ETLS: smtp(true, 'server', "The mail server's certificate is not trusted (untrusted CA, expired, or another host's name).", HELD),
  SMTP_TLS_REQUIRED: smtp(
    true,
    'server',
    'The relay logs in, and the mail server offers no STARTTLS: nothing was sent, the login included.',
    HELD,
  ),
  // A password changed on the server before the relay's: the same mail passes once the relay has the new one.
  EAUTH: smtp(true, 'server', 'The mail server refused the SMTP user name or password.', HELD),
  ENOAUTH: smtp(true, 'server', 'The mail server wants a login and none is configured.', HELD),
};

/** A login's codes, which win over the reply code nodemailer attaches (454, or 535 to a refused XOAUTH2 token). */
const LOGIN_CODES: ReadonlySet<string> = new Set(['EAUTH', 'ENOAUTH', 'SMTP_TLS_REQUIRED', ...Object.keys(OAUTH2_FAILURES)]);

/**
 * A nodemailer error as an SMTP code, the server's words masked. A login's code wins (with OAuth2 the token's own, or
 * OAUTH2_REFUSED; a refused STARTTLS is SMTP_TLS_REQUIRED), then the reply's class, then ETLS by the words.
 */
export function readSmtpError(error: unknown, login: { mask?: SecretMask; oauth2?: boolean; requireTls?: boolean } = {}): unknown {
  if (!error || typeof error !== 'object') return error;
  const err = error as Record<'code' | 'ownCode' | 'responseCode' | 'message' | 'response' | 'command', unknown> & {
    scope?: string;
    retryAfterMs?: number;
  };
  const { mask = (text: string) => text } = login;
  if (typeof err.message === 'string') err.message = mask(err.message);
  if (typeof err.response === 'string') err.response = mask(err.response);
  if (login.oauth2 && typeof err.ownCode === 'string') err.code = err.ownCode;
  else if (login.oauth2 && err.code === 'EAUTH') err.code = 'OAUTH2_REFUSED';
  else if (login.requireTls && err.code === 'ETLS' && err.command === 'STARTTLS' && typeof err.response === 'string')
    err.code = 'SMTP_TLS_REQUIRED';
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (code !== undefined && LOGIN_CODES.has(code)) return error;
  const responseCode = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const text = `${typeof err.message === 'string' ? err.message : ''} ${typeof err.response === 'string' ? err.response : ''}`;
  const socketCode = code === undefined || code === 'ESOCKET' || code === 'ECONNECTION' || !Object.hasOwn(SMTP_FAILURES, code);
  // 530 "authentication required" (RFC 4954 §6) to MAIL FROM: the server wants a login before any mail.
  if (responseCode === 530) err.code = 'ENOAUTH';
  // A failed TLS handshake arrives as a socket code, Node's own (CERT_…) or none; a reply naming a certificate is a reply.
  else if (code === 'ETLS' || (socketCode && responseCode === undefined && isCertificateFailure(text))) err.code = 'ETLS';
  else if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) {
    const retryAfterMs = parseStatedWaitMs(text);
    err.code = 'SMTP_4XX';
    // 421 is about the service (RFC 5321 §3.8), as is a stated wait (a rate limit); a bare 451 is about this message.
    if (responseCode === 421 || retryAfterMs !== undefined) err.scope = 'server';
    if (retryAfterMs !== undefined) err.retryAfterMs = retryAfterMs;
  } else if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) err.code = 'SMTP_5XX';
  return error;
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000 };

/** The wait a reply states ("try again in 30 seconds", "in 00:05:00"); a bare "try again later" guesses nothing. */
function parseStatedWaitMs(reply: string): number | undefined {
  const text = reply.slice(0, 1000);
  const clock = /\bin\s+(\d{1,2}):([0-5]\d):([0-5]\d)\b/i.exec(text);
  if (clock) return ((Number(clock[1]) * 60 + Number(clock[2])) * 60 + Number(clock[3])) * 1000;
  const spoken =
    /\b(?:try again|retry|come back|resend|wait)\b[^.;]{0,20}?\b(\d{1,6})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b/i.exec(text);
  return spoken ? Number(spoken[1]) * UNIT_MS[spoken[2][0].toLowerCase()] : undefined;
}

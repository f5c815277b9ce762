import { describeMailError } from '../mail';
import { parseFailureCode, type FailureCode } from '../shared';

/**
 * What a stored failure code means, in words an on-call reads at a glance. The code and the raw
 * error stay next to it for the details; a code without words here shows the generic sentence.
 */
const FAILURE_WORDS: Partial<Record<FailureCode, string>> = {
  SMTP_4XX: 'The mail server refused the message for now (temporary 4xx); it is tried again.',
  SMTP_5XX: 'The mail server refused the message for good (5xx).',
  EENVELOPE: 'The mail server refused a sender or recipient address.',
  EMESSAGE: 'The mail server refused the message content.',
  ECONNECTION: 'The mail server could not be reached.',
  ECONNREFUSED: 'The mail server refused the connection (is it running, is SMTP_URL right?).',
  ECONNRESET: 'The mail server dropped the connection.',
  ETIMEDOUT: 'The mail server did not answer in time.',
  ESOCKET: 'The connection to the mail server failed.',
  EDNS: "The mail server's name could not be resolved.",
  EPIPE: 'The mail server closed the connection while the message was sent.',
  EHOSTUNREACH: 'The mail server is unreachable from here (no route to the host).',
  ENETUNREACH: 'The network of the mail server is unreachable.',
  EAI_AGAIN: "The mail server's name could not be resolved now (DNS).",
  EPROTOCOL: 'The mail server answered something SMTP does not allow.',
  ESTREAM: 'The message could not be streamed to the mail server.',
  ETLS: "The mail server's certificate is not trusted (SMTP_CA_FILE, host name).",
  EAUTH: 'The mail server refused the SMTP user name or password.',
  ENOAUTH: 'The mail server wants a login and none is configured.',
  TEMPLATE: 'A mail template failed to render (a configuration problem).',
  RENDER: 'The mail could not be built from this report.',
  EUNREADABLE: 'The stored delivery could not be read.',
  ROUTE_REMOVED: 'Its route is no longer in ROUTES_FILE.',
  SMTP_PAUSED: 'Sending is paused: the mail server failed for every message lately.',
};

/**
 * A delivery's failure in words: what happened and what to change when the stored error is one a user
 * can fix (refused, DNS, TLS, certificate, login: the same words as `verify-smtp`), else its code's
 * sentence (codes outside the catalogue read as "unknown").
 */
export function describeFailure(code: string | null, error?: string | null): string {
  const fixable = code ? describeMailError({ code, message: error ?? '' }) : undefined;
  return fixable ?? FAILURE_WORDS[parseFailureCode(code)] ?? 'The send failed for a reason the relay does not know; it is tried again.';
}

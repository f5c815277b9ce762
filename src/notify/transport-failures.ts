import type { FailureFacts } from '../shared';

/** The facts of a failure `transport` sets; `answered`: the mail server answered about this message, so it is reachable. */
function failure(transport: string, retryable: boolean, scope: 'server' | 'message', words: string, answered = false): FailureFacts {
  return { retryable, configProblem: false, scope, transport, serverReachable: answered, words };
}
const smtp = failure.bind(undefined, 'smtp');
const graph = failure.bind(undefined, 'graph');
const oauth2 = failure.bind(undefined, 'oauth2');
const ANSWERED = true;
/** An operator must act, and the queue waits for the fix however long it takes. */
const HELD_FOR_OPERATOR = { configProblem: true };

/**
 * The SMTP transport's failure codes. SMTP_4XX's scope depends on the reply (421 is about the service,
 * RFC 5321 §3.8), so it is decided where the error is classified. Codes are nodemailer's `err.code` where it
 * has one (nodemailer `lib/errors.js`), so the stored code reads like the library's documentation.
 */
export const SMTP_FAILURES: Readonly<Record<string, FailureFacts>> = {
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
  ETLS: {
    ...smtp(true, 'server', "The mail server's certificate is not trusted (untrusted CA, expired, or another host's name)."),
    ...HELD_FOR_OPERATOR,
  },
  SMTP_TLS_REQUIRED: {
    ...smtp(true, 'server', 'The relay logs in, and the mail server offers no STARTTLS: nothing was sent, the login included.'),
    ...HELD_FOR_OPERATOR,
  },
  // A password changed on the server before the relay's: the same mail passes once the relay has the new one.
  EAUTH: { ...smtp(true, 'server', 'The mail server refused the SMTP user name or password.'), ...HELD_FOR_OPERATOR },
  ENOAUTH: { ...smtp(true, 'server', 'The mail server wants a login and none is configured.'), ...HELD_FOR_OPERATOR },
};

/** The codes of a token request: either transport that logs in with OAuth2 sets them (both descriptors list them). */
export const OAUTH2_FAILURES: Readonly<Record<string, FailureFacts>> = {
  // Every mail would fail alike until an operator renews the secret (client secrets expire on a date), which can take days.
  OAUTH2_REFUSED: {
    ...oauth2(true, 'server', "The OAuth2 token endpoint or the mail server refused the app's credentials (client secret, tenant, grant)."),
    ...HELD_FOR_OPERATOR,
  },
  OAUTH2_UNAVAILABLE: oauth2(true, 'server', 'The OAuth2 token endpoint could not be reached or is overloaded (429, 5xx): no token yet.'),
};

/** Graph's codes, and OAuth2's (its token). */
export const GRAPH_FAILURES: Readonly<Record<string, FailureFacts>> = {
  ...OAUTH2_FAILURES,
  GRAPH_THROTTLED: graph(true, 'server', 'Microsoft Graph asked to slow down (429); the queue waits at least its Retry-After.'),
  GRAPH_UNAVAILABLE: graph(true, 'server', 'Microsoft Graph could not be reached or failed (5xx).'),
  GRAPH_ACCESS_DENIED: {
    ...graph(true, 'server', 'Microsoft Graph refused to send as this mailbox (403/404: permission Mail.Send, or no such mailbox).'),
    ...HELD_FOR_OPERATOR,
  },
  GRAPH_REJECTED: graph(false, 'message', 'Microsoft Graph refused this message (a 4xx about it: a recipient, its size).', ANSWERED),
};

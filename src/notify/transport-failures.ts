import type { FailureFacts } from '../shared';

/** The facts of a failure `transport` sets; `facts` overrides the usual (retried or not, nothing else). */
const failureOf =
  (transport: string) =>
  (retryable: boolean, scope: FailureFacts['scope'], words: string, facts: Partial<FailureFacts> = {}): FailureFacts => ({
    retryable,
    configProblem: false,
    heldForOperator: false,
    scope,
    transport,
    serverReachable: false,
    words,
    ...facts,
  });
const smtp = failureOf('smtp');
const graph = failureOf('graph');
const oauth2 = failureOf('oauth2');

/** The mail server answered about this message: it is reachable. */
const REPLY = { serverReachable: true };

/**
 * The SMTP transport's failure codes. SMTP_4XX's scope depends on the reply (421 is about the service,
 * RFC 5321 §3.8), so it is decided where the error is classified. Codes are nodemailer's `err.code` where it
 * has one (nodemailer `lib/errors.js`), so the stored code reads like the library's documentation.
 */
export const SMTP_FAILURES: Readonly<Record<string, FailureFacts>> = {
  SMTP_4XX: smtp(true, 'message', 'The mail server refused the message for now (temporary 4xx).', REPLY),
  SMTP_5XX: smtp(false, 'message', 'The mail server refused the message for good (5xx).', REPLY),
  EENVELOPE: smtp(false, 'message', 'The mail server refused a sender or recipient address.', REPLY),
  EMESSAGE: smtp(false, 'message', 'The mail server refused the message content.', REPLY),
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
  // Certificate trust (untrusted, expired, another host's): nothing changes until an operator fixes
  // SMTP_CA_FILE or SMTP_URL, yet it is retried so that the queue drains by itself once the fix is deployed.
  ETLS: smtp(true, 'server', "The mail server's certificate is not trusted (untrusted CA, expired, or another host's name).", {
    configProblem: true,
  }),
  EAUTH: smtp(false, 'message', 'The mail server refused the SMTP user name or password.', { configProblem: true }),
  ENOAUTH: smtp(false, 'message', 'The mail server wants a login and none is configured.', { configProblem: true }),
};

/** The codes of a token request: either transport that logs in with OAuth2 sets them (both descriptors list them). */
export const OAUTH2_FAILURES: Readonly<Record<string, FailureFacts>> = {
  // The token endpoint or the server refused the app's credentials or token: every mail would fail alike
  // until an operator renews the secret (client secrets expire on a date), which can take days.
  OAUTH2_REFUSED: oauth2(
    true,
    'server',
    "The OAuth2 token endpoint or the mail server refused the app's credentials (client secret, tenant, grant).",
    {
      configProblem: true,
      heldForOperator: true,
    },
  ),
  OAUTH2_UNAVAILABLE: oauth2(true, 'server', 'The OAuth2 token endpoint could not be reached or is overloaded (429, 5xx): no token yet.'),
};

/** Graph's codes, and OAuth2's (its token). */
export const GRAPH_FAILURES: Readonly<Record<string, FailureFacts>> = {
  ...OAUTH2_FAILURES,
  // Microsoft Graph's sendMail: 429 (the pause honours Retry-After), 5xx or no answer, 403/404 (the app may
  // not send as the mailbox, or it does not exist), and a 4xx about this message.
  GRAPH_THROTTLED: graph(true, 'server', 'Microsoft Graph asked to slow down (429); the queue waits at least its Retry-After.'),
  GRAPH_UNAVAILABLE: graph(true, 'server', 'Microsoft Graph could not be reached or failed (5xx).'),
  GRAPH_ACCESS_DENIED: graph(
    true,
    'server',
    'Microsoft Graph refused to send as this mailbox (403/404: permission Mail.Send, or no such mailbox).',
    {
      configProblem: true,
      heldForOperator: true,
    },
  ),
  GRAPH_REJECTED: graph(false, 'message', 'Microsoft Graph refused this message (a 4xx about it: a recipient, its size).', REPLY),
};

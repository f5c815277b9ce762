/** Which transport sets a code: `oauth2` for either transport that logs in with OAuth2; `relay` for the relay's own. */
type FailureTransport = 'smtp' | 'graph' | 'oauth2' | 'relay';

/** What the catalogue knows of one delivery failure code. */
export interface FailureFacts {
  /** A later attempt can succeed (principle 3). */
  retryable: boolean;
  /** An operator must act (credentials, TLS trust, a template, a route): logged loudly. */
  configProblem: boolean;
  /** The queue waits for the operator's fix however long it takes: no delivery is given up for it. */
  heldForOperator: boolean;
  /** `server`: every delivery would fail alike (the worker pauses the whole queue); `message`: this one only. */
  scope: 'server' | 'message';
  transport: FailureTransport;
  /**
   * The failure says nothing against reaching the mail server: it answered about this message (so it is
   * reachable), or it was never asked (the template or the stored delivery was at fault).
   */
  serverReachable: boolean;
  /** What happened, in words an on-call reads at a glance (dashboard, docs/errors.md). */
  words: string;
}

function smtp(retryable: boolean, scope: 'server' | 'message', words: string): FailureFacts {
  return { retryable, configProblem: false, heldForOperator: false, scope, transport: 'smtp', serverReachable: false, words };
}

/** The mail server answered about this message: it is reachable. */
function reply(facts: FailureFacts): FailureFacts {
  return { ...facts, serverReachable: true };
}

/**
 * The one closed catalogue of delivery failure codes: what is stored with a delivery, logged, used as a
 * metric label, and read by the retry policy, the dashboard, the commands and docs/errors.md. SMTP_4XX's
 * scope depends on the reply (421 is about the service, RFC 5321 §3.8), so it is decided where the error
 * is classified. Codes are nodemailer's `err.code` where it has one (nodemailer `lib/errors.js`), so the
 * stored code reads like the library's documentation.
 */
export const FAILURE_CATALOGUE = {
  SMTP_4XX: reply(smtp(true, 'message', 'The mail server refused the message for now (temporary 4xx).')),
  SMTP_5XX: reply(smtp(false, 'message', 'The mail server refused the message for good (5xx).')),
  EENVELOPE: reply(smtp(false, 'message', 'The mail server refused a sender or recipient address.')),
  EMESSAGE: reply(smtp(false, 'message', 'The mail server refused the message content.')),
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
  ETLS: {
    ...smtp(true, 'server', "The mail server's certificate is not trusted (untrusted CA, expired, or another host's name)."),
    configProblem: true,
  },
  EAUTH: { ...smtp(false, 'message', 'The mail server refused the SMTP user name or password.'), configProblem: true },
  ENOAUTH: { ...smtp(false, 'message', 'The mail server wants a login and none is configured.'), configProblem: true },
  // The token endpoint or the server refused the app's credentials or token: every mail would fail alike
  // until an operator renews the secret (client secrets expire on a date), which can take days.
  OAUTH2_REFUSED: {
    retryable: true,
    configProblem: true,
    heldForOperator: true,
    scope: 'server',
    transport: 'oauth2',
    serverReachable: false,
    words: "The OAuth2 token endpoint or the mail server refused the app's credentials (client secret, tenant, grant).",
  },
  OAUTH2_UNAVAILABLE: {
    retryable: true,
    configProblem: false,
    heldForOperator: false,
    scope: 'server',
    transport: 'oauth2',
    serverReachable: false,
    words: 'The OAuth2 token endpoint could not be reached or is overloaded (429, 5xx): no token yet.',
  },
  // Microsoft Graph's sendMail: 429 (the pause honours Retry-After), 5xx or no answer, 403/404 (the app may
  // not send as the mailbox, or it does not exist), and a 4xx about this message.
  GRAPH_THROTTLED: graph(true, 'server', 'Microsoft Graph asked to slow down (429); the queue waits at least its Retry-After.'),
  GRAPH_UNAVAILABLE: graph(true, 'server', 'Microsoft Graph could not be reached or failed (5xx).'),
  GRAPH_ACCESS_DENIED: {
    ...graph(true, 'server', 'Microsoft Graph refused to send as this mailbox (403/404: permission Mail.Send, or no such mailbox).'),
    configProblem: true,
    heldForOperator: true,
  },
  GRAPH_REJECTED: reply(graph(false, 'message', 'Microsoft Graph refused this message (a 4xx about it: a recipient, its size).')),
  TEMPLATE: { ...relay(false, 'message', 'A mail template failed to render (a configuration problem).', true), configProblem: true },
  RENDER: relay(false, 'message', 'The mail could not be built from this report.', true),
  EUNREADABLE: relay(false, 'message', 'The stored delivery could not be read.', true),
  ROUTE_REMOVED: { ...relay(false, 'message', 'Its route is no longer in ROUTES_FILE.', true), configProblem: true },
  SMTP_PAUSED: relay(true, 'server', 'Sending is paused: the mail server failed for every message lately.'),
  // Anything else: a retry that fails again costs little, a mail wrongly given up costs a report.
  UNKNOWN: relay(true, 'message', 'The send failed for a reason the relay does not know.'),
} as const satisfies Record<string, FailureFacts>;

function graph(retryable: boolean, scope: 'server' | 'message', words: string): FailureFacts {
  return { retryable, configProblem: false, heldForOperator: false, scope, transport: 'graph', serverReachable: false, words };
}

/** The relay's own failure; `notSent`: the mail server was never asked (the template or the stored delivery was at fault). */
function relay(retryable: boolean, scope: 'server' | 'message', words: string, notSent = false): FailureFacts {
  return { retryable, configProblem: false, heldForOperator: false, scope, transport: 'relay', serverReachable: notSent, words };
}

export type FailureCode = keyof typeof FAILURE_CATALOGUE;

/** The facts of `code` (an unknown code reads as `UNKNOWN`). */
export function readFailureFacts(code: unknown): FailureFacts {
  return FAILURE_CATALOGUE[parseFailureCode(code)];
}

/** True when `code` is one of {@link FAILURE_CATALOGUE}'s codes. */
export function isFailureCode(code: unknown): code is FailureCode {
  return typeof code === 'string' && Object.hasOwn(FAILURE_CATALOGUE, code);
}

/** A stored or foreign code as a catalogue code: anything outside the catalogue is `UNKNOWN`. */
export function parseFailureCode(code: unknown): FailureCode {
  return isFailureCode(code) ? code : 'UNKNOWN';
}

/** What happens next to a delivery that failed with these facts, in one sentence. */
export function describeFailureOutcome(facts: FailureFacts): string {
  if (facts.heldForOperator) return 'The queue waits for an operator to fix it; nothing is given up.';
  if (!facts.retryable) return 'It is not tried again.';
  return facts.configProblem ? 'It is tried again, but only an operator’s fix can make it pass.' : 'It is tried again.';
}

/**
 * Node's and OpenSSL's words for a server certificate the relay does not trust: an unknown CA, a
 * self-signed one, expired or not yet valid, another host's name (tls.checkServerIdentity, X509 verify).
 * nodemailer reports all of them as `ESOCKET`, with only these words to tell them from a network fault.
 */
const CERTIFICATE_NOT_TRUSTED =
  /certificate|self[- ]signed|unable to verify|unable to get (local )?issuer|altnames|CERT_|DEPTH_ZERO|UNABLE_TO_VERIFY|ERR_TLS_CERT/i;

/** True when an error's message says the server's certificate is not trusted (a configuration problem: `ETLS`). */
export function isCertificateFailure(message: string): boolean {
  return CERTIFICATE_NOT_TRUSTED.test(message);
}

/**
 * The one catalogue of error codes the relay answers with. Tests assert codes, not prose.
 * `retryable` tells the sender (or an operator) whether sending the same request again can help.
 */
export const ERROR_CATALOGUE = {
  BODY_NOT_JSON: { status: 400, retryable: false, message: 'The request body is not valid JSON.' },
  BODY_NOT_UTF8: { status: 400, retryable: false, message: 'The request body is not valid UTF-8.' },
  ENVELOPE_INVALID: { status: 422, retryable: false, message: 'The webhook envelope is not a NetBox event.' },
  REPORT_INVALID: { status: 422, retryable: false, message: 'The compliance report fields are invalid.' },
  SIGNATURE_MISSING: { status: 401, retryable: false, message: 'X-Hook-Signature is required: a webhook secret is configured.' },
  SIGNATURE_INVALID: { status: 401, retryable: false, message: 'X-Hook-Signature does not match the body.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: 'The request body exceeds WEBHOOK_MAX_BYTES.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, message: 'The body must be application/json.' },
  UNSUPPORTED_ENCODING: { status: 415, retryable: false, message: 'Compressed or encoded bodies are not accepted.' },
  REQUEST_ABORTED: { status: 400, retryable: true, message: 'The request body was not received completely.' },
  REQUEST_TIMEOUT: { status: 408, retryable: true, message: 'The request body was not received in time.' },
  STORAGE_UNAVAILABLE: { status: 503, retryable: true, message: 'The delivery could not be stored; nothing was kept. Retry later.' },
  FORBIDDEN_ADDRESS: { status: 403, retryable: false, message: 'This client address may not post deliveries.' },
  RATE_LIMITED: { status: 429, retryable: true, message: 'Too many requests from this address.' },
  UNAUTHORIZED: { status: 401, retryable: false, message: 'A valid bearer token is required.' },
  ADMIN_DISABLED: { status: 404, retryable: false, message: 'The admin API is disabled: ADMIN_TOKEN is not set.' },
  NOT_FOUND: { status: 404, retryable: false, message: 'Not found.' },
  INVALID_REQUEST: { status: 400, retryable: false, message: 'The request is invalid.' },
  CONFLICT: { status: 409, retryable: false, message: 'The request conflicts with the current state.' },
  INTERNAL: { status: 500, retryable: true, message: 'Internal error.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** One problem found in a request, with where it is (a JSON path or a header name). */
export interface ErrorIssue {
  path: string;
  message: string;
}

/** An error with a stable code from {@link ERROR_CATALOGUE}; safe to show to a client. */
export class RelayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly issues?: ErrorIssue[];

  constructor(code: ErrorCode, options: { message?: string; issues?: ErrorIssue[]; cause?: unknown } = {}) {
    super(options.message ?? ERROR_CATALOGUE[code].message, { cause: options.cause });
    this.name = 'RelayError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.retryable = ERROR_CATALOGUE[code].retryable;
    this.issues = options.issues;
  }
}

/** The JSON body of an error answer: `{"error": {"code", "message", "issues"?}}`, never a stack or a secret. */
export function buildErrorBody(error: RelayError): {
  error: { code: ErrorCode; message: string; retryable: boolean; issues?: ErrorIssue[] };
} {
  return {
    error: {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(error.issues ? { issues: error.issues } : {}),
    },
  };
}

/**
 * Where a delivery failure comes from. `connection`: the SMTP server cannot be talked to at all;
 * `reply`: the server answered this message (so it is reachable); `content`: the stored report or
 * its rendering; `config`: something only an operator can fix; `queue`: the worker's own decision.
 */
export type FailureSource = 'connection' | 'reply' | 'content' | 'config' | 'queue' | 'unknown';

/**
 * The one closed catalogue of delivery failure codes: what is stored with a delivery, logged, and
 * used as a metric label. `retryable` says whether a later attempt can succeed (principle 3);
 * `configProblem` that an operator must act; `scope` whether every delivery would fail alike
 * (`server`: the worker pauses the whole queue) or only this one (`message`). SMTP_4XX's scope
 * depends on the reply (421 is about the service, RFC 5321 §3.8), so it is decided where the error
 * is classified. Codes are nodemailer's `err.code` where it has one (nodemailer
 * `lib/errors.js`), so the stored code reads like the library's documentation.
 */
export const FAILURE_CATALOGUE = {
  SMTP_4XX: { retryable: true, configProblem: false, scope: 'message', source: 'reply' },
  SMTP_5XX: { retryable: false, configProblem: false, scope: 'message', source: 'reply' },
  EENVELOPE: { retryable: false, configProblem: false, scope: 'message', source: 'reply' },
  EMESSAGE: { retryable: false, configProblem: false, scope: 'message', source: 'reply' },
  ECONNECTION: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  ECONNREFUSED: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  ECONNRESET: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  ETIMEDOUT: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  ESOCKET: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  EDNS: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  EPIPE: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  EHOSTUNREACH: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  ENETUNREACH: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  EAI_AGAIN: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  EPROTOCOL: { retryable: true, configProblem: false, scope: 'message', source: 'connection' },
  ESTREAM: { retryable: true, configProblem: false, scope: 'message', source: 'connection' },
  // Certificate trust: nothing changes until an operator fixes SMTP_CA_FILE, yet it is retried so
  // that the queue drains by itself once the fix is deployed.
  ETLS: { retryable: true, configProblem: true, scope: 'server', source: 'config' },
  EAUTH: { retryable: false, configProblem: true, scope: 'message', source: 'config' },
  ENOAUTH: { retryable: false, configProblem: true, scope: 'message', source: 'config' },
  TEMPLATE: { retryable: false, configProblem: true, scope: 'message', source: 'content' },
  RENDER: { retryable: false, configProblem: false, scope: 'message', source: 'content' },
  EUNREADABLE: { retryable: false, configProblem: false, scope: 'message', source: 'content' },
  ROUTE_REMOVED: { retryable: false, configProblem: true, scope: 'message', source: 'config' },
  // OAuth2. The token endpoint or the server refused the app's credentials or token: every
  // mail would fail alike until an operator fixes the app registration, so the queue pauses (nothing is
  // dead-lettered for it) and drains by itself once the fix is deployed.
  OAUTH2_REFUSED: { retryable: true, configProblem: true, scope: 'server', source: 'config' },
  // The token endpoint cannot be reached or answers 429/5xx: no token, so nothing can be sent yet.
  OAUTH2_UNAVAILABLE: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  // Microsoft Graph's sendMail: 429 (the pause honours Retry-After), 5xx or no answer, 403/404 (the app may
  // not send as the mailbox, or it does not exist), and a 4xx about this message.
  GRAPH_THROTTLED: { retryable: true, configProblem: false, scope: 'server', source: 'reply' },
  GRAPH_UNAVAILABLE: { retryable: true, configProblem: false, scope: 'server', source: 'connection' },
  GRAPH_ACCESS_DENIED: { retryable: true, configProblem: true, scope: 'server', source: 'config' },
  GRAPH_REJECTED: { retryable: false, configProblem: false, scope: 'message', source: 'reply' },
  SMTP_PAUSED: { retryable: true, configProblem: false, scope: 'server', source: 'queue' },
  // Anything else: a retry that fails again costs little, a mail wrongly given up costs a report.
  UNKNOWN: { retryable: true, configProblem: false, scope: 'message', source: 'unknown' },
} as const satisfies Record<string, { retryable: boolean; configProblem: boolean; scope: 'server' | 'message'; source: FailureSource }>;

export type FailureCode = keyof typeof FAILURE_CATALOGUE;

/** True when `code` is one of {@link FAILURE_CATALOGUE}'s codes. */
export function isFailureCode(code: unknown): code is FailureCode {
  return typeof code === 'string' && Object.hasOwn(FAILURE_CATALOGUE, code);
}

/** A stored or foreign code as a catalogue code: anything outside the catalogue is `UNKNOWN`. */
export function parseFailureCode(code: unknown): FailureCode {
  return isFailureCode(code) ? code : 'UNKNOWN';
}

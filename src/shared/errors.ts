/** The one catalogue of error codes the relay answers with; `retryable`: whether sending the same request again can help. */
export const ERROR_CATALOGUE = {
  BODY_NOT_JSON: { status: 400, retryable: false, message: 'The request body is not valid JSON.' },
  BODY_NOT_UTF8: { status: 400, retryable: false, message: 'The request body is not valid UTF-8.' },
  ENVELOPE_INVALID: { status: 422, retryable: false, message: 'The webhook envelope is not a NetBox event.' },
  REPORT_INVALID: { status: 422, retryable: false, message: 'The compliance report fields are invalid.' },
  SIGNATURE_MISSING: { status: 401, retryable: false, message: 'X-Hook-Signature is required: a webhook secret is configured.' },
  SIGNATURE_INVALID: { status: 401, retryable: false, message: 'X-Hook-Signature does not match the body.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: 'The request body exceeds the 1 MiB a webhook may have.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, message: 'The body must be application/json.' },
  UNSUPPORTED_ENCODING: { status: 415, retryable: false, message: 'Compressed or encoded bodies are not accepted.' },
  REQUEST_ABORTED: { status: 400, retryable: true, message: 'The request body was not received completely.' },
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
export type ErrorIssue = { path: string; message: string };

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

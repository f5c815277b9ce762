import { TemplateError } from '../mail';

export type FailureKind = 'transient' | 'permanent';

/**
 * Who the failure is about. `server`: the SMTP service as a whole is unreachable or refusing
 * (connection errors, 421 "service not available", 451 "local error"): every delivery would fail the
 * same way, so the worker pauses the whole queue and probes with the oldest delivery. `message`: this
 * delivery only (a 450 mailbox busy, a 5xx, a template error).
 */
export type FailureScope = 'server' | 'message';

export interface FailureClass {
  kind: FailureKind;
  /** Stable code stored with the delivery and used in metrics: SMTP_4XX, ECONNECTION, EAUTH, … */
  code: string;
  /** A configuration problem (bad credentials, TLS trust): logged loudly, an operator must act. */
  configProblem: boolean;
  scope: FailureScope;
  message: string;
}

/** nodemailer `err.code`s where the server or network may recover by itself. */
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPROTOCOL', 'ESTREAM']);

/** Of those, the ones that say "the server cannot be talked to at all" (not this one message). */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** SMTP replies about the service, not the message (RFC 5321 §4.2.3): 421 closing, 451 local error. */
const SERVER_REPLY_CODES = new Set([421, 451]);

/**
 * The one place that decides whether a failed send can succeed later (prometheus/alertmanager
 * notify/retry_stage). SMTP 4xx replies, connection, DNS and timeout errors are transient: retry
 * with backoff. 5xx replies, envelope errors and template errors are permanent: dead at once.
 * Authentication failures are permanent and a configuration problem. Anything unknown is treated
 * as transient: a retry that fails again costs little, a mail wrongly given up costs a report.
 */
export function classifyFailure(error: unknown): FailureClass {
  const err = (error ?? {}) as { code?: unknown; responseCode?: unknown; message?: unknown; response?: unknown };
  const message = describe(error);
  const make = (kind: FailureKind, code: string, configProblem: boolean, scope: FailureScope = 'message'): FailureClass => ({ kind, code, configProblem, scope, message });
  if (error instanceof TemplateError) return make('permanent', 'TEMPLATE', true);
  const code = typeof err.code === 'string' ? err.code : undefined;
  const responseCode = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  if (code === 'EAUTH' || code === 'ENOAUTH') return make('permanent', code, true);
  // Certificate trust: nothing will change until an operator fixes SMTP_CA_FILE, and every mail fails alike.
  if (code === 'ETLS' || isCertificateError(err)) return make('transient', 'ETLS', true, 'server');
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) {
    return make('transient', 'SMTP_4XX', false, SERVER_REPLY_CODES.has(responseCode) ? 'server' : 'message');
  }
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) return make('permanent', 'SMTP_5XX', false);
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return make('permanent', code, false);
  if (code && TRANSIENT_CODES.has(code)) return make('transient', code, false, CONNECTION_CODES.has(code) ? 'server' : 'message');
  return make('transient', code ?? 'UNKNOWN', false);
}

function isCertificateError(err: { code?: unknown; message?: unknown }): boolean {
  const text = `${String(err.code ?? '')} ${String(err.message ?? '')}`;
  return /CERT_|SELF_SIGNED|UNABLE_TO_VERIFY_LEAF_SIGNATURE|ERR_TLS_CERT_ALTNAME|unable to verify|self[- ]signed certificate/i.test(text);
}

/** A one-line description with the SMTP answer when there is one; never a stack. */
function describe(error: unknown): string {
  const err = error as { message?: unknown; response?: unknown };
  const message = typeof err?.message === 'string' ? err.message : String(error);
  const response = typeof err?.response === 'string' && !message.includes(err.response) ? ` (${err.response})` : '';
  return `${message}${response}`.replace(/\s+/g, ' ').slice(0, 1000);
}

import { TemplateError } from '../mail';

export type FailureKind = 'transient' | 'permanent';

export interface FailureClass {
  kind: FailureKind;
  /** Stable code stored with the delivery and used in metrics: SMTP_4XX, ECONNECTION, EAUTH, … */
  code: string;
  /** A configuration problem (bad credentials, TLS trust): logged loudly, an operator must act. */
  configProblem: boolean;
  message: string;
}

/** nodemailer `err.code`s where the server or network may recover by itself. */
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPROTOCOL', 'ESTREAM']);

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
  if (error instanceof TemplateError) return { kind: 'permanent', code: 'TEMPLATE', configProblem: true, message };
  const code = typeof err.code === 'string' ? err.code : undefined;
  const responseCode = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  if (code === 'EAUTH' || code === 'ENOAUTH') return { kind: 'permanent', code, configProblem: true, message };
  if (code === 'ETLS' || isCertificateError(err)) return { kind: 'transient', code: 'ETLS', configProblem: true, message };
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) return { kind: 'transient', code: 'SMTP_4XX', configProblem: false, message };
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) return { kind: 'permanent', code: 'SMTP_5XX', configProblem: false, message };
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return { kind: 'permanent', code, configProblem: false, message };
  if (code && TRANSIENT_CODES.has(code)) return { kind: 'transient', code, configProblem: false, message };
  return { kind: 'transient', code: code ?? 'UNKNOWN', configProblem: false, message };
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

/**
 * Why a NetBox call failed: AUTH (401/403); NOT_FOUND (404, or 400 on `report_id`: validity deleted it); UNREACHABLE
 * (refused, reset, DNS, TLS); TIMEOUT; SERVER (5xx); PROTOCOL (not NetBox's JSON); UNSAFE_URL (not a clean path on
 * NETBOX_URL's origin: nothing was sent).
 */
export type NetboxErrorCode = 'AUTH' | 'NOT_FOUND' | 'UNREACHABLE' | 'TIMEOUT' | 'SERVER' | 'PROTOCOL' | 'UNSAFE_URL';

export class NetboxError extends Error {
  readonly code: NetboxErrorCode;
  readonly status?: number;
  readonly retryable: boolean;
  /** What NetBox said (`{"detail": …}`), or the network error code. */
  readonly detail?: string;
  constructor(code: NetboxErrorCode, message: string, options: { status?: number; detail?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'NetboxError';
    this.code = code;
    this.status = options.status;
    this.detail = options.detail;
    this.retryable = code === 'UNREACHABLE' || code === 'TIMEOUT' || code === 'SERVER';
  }
}

/** Maps an HTTP status of the NetBox API to an error, with NetBox's `{"detail": …}` when it sent one. */
export function classifyNetboxStatus(status: number, url: string, detail?: string): NetboxError {
  const said = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403)
    return new NetboxError('AUTH', `NetBox refused the token (HTTP ${status})${said}`, { status, detail });
  // A proxy between the relay and NetBox wants credentials (or others): HTTP_PROXY/HTTPS_PROXY are to fix, not the token.
  if (status === 407) {
    const message = 'the proxy refused to carry the request to NetBox (HTTP 407): check the credentials in HTTPS_PROXY or HTTP_PROXY';
    return new NetboxError('PROTOCOL', message, { status });
  }
  if (status === 404 || status === 400)
    return new NetboxError('NOT_FOUND', `NetBox has no such report any more (HTTP ${status} for ${url})${said}`, { status, detail });
  if (status >= 500) return new NetboxError('SERVER', `NetBox answered HTTP ${status}${said}`, { status, detail });
  return new NetboxError('PROTOCOL', `NetBox answered HTTP ${status} for ${url}${said}`, { status, detail });
}

/** Node's codes for a certificate issued to another name than the one in NETBOX_URL, and (OpenSSL's) for one out of its validity period. */
const NAME_MISMATCH_CODES = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_TLS_CERT_ALTNAME_FORMAT']);
const EXPIRED_CODES = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** What went wrong with NetBox's TLS certificate, in words that point at the fix (a CA file does not fix a name mismatch), or undefined. */
export function describeTlsFailure(code: string, message: string): string | undefined {
  if (NAME_MISMATCH_CODES.has(code))
    return `NetBox's TLS certificate is not valid for the host in NETBOX_URL (name mismatch: ${message}); use a host name the certificate names`;
  if (EXPIRED_CODES.has(code)) return `NetBox's TLS certificate is out of its validity period (${code}: ${message})`;
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
    return `NetBox's TLS certificate is not trusted (${code}: ${message}); set NETBOX_CA_FILE to NetBox's CA`;
  return undefined;
}

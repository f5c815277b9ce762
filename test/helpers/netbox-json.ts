import { createHmac } from 'node:crypto';

/**
 * Python's `json.dumps(value)` with its defaults, as NetBox serializes a webhook body:
 * separators ", " and ": ", non-ASCII escaped as \uXXXX (ensure_ascii), keys in insertion order.
 * Written independently of the relay's code so fixtures do not share its mistakes.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('NaN/Infinity are not JSON');
    return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  }
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pythonString(k)}: ${pythonJsonDumps(v)}`)
      .join(', ')}}`;
  }
  throw new Error(`cannot serialize ${typeof value}`);
}

function pythonFloatRepr(n: number): string {
  const s = String(n);
  return /[.eE]/.test(s) ? s.replace(/e\+?/, 'e+').replace('e+-', 'e-') : `${s}.0`;
}

function pythonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (code < 0x20 || (code >= 0x7f && code <= 0xffff)) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else if (code > 0xffff) {
      // Surrogate pair, lowercase hex, as Python writes it.
      const v = code - 0x10000;
      out += `\\u${(0xd800 + (v >> 10)).toString(16)}\\u${(0xdc00 + (v & 0x3ff)).toString(16)}`;
    } else out += ch;
  }
  return `${out}"`;
}

/** X-Hook-Signature as NetBox computes it: hex HMAC-SHA512 of the body with the secret's UTF-8 bytes. */
export function netboxSignature(body: Buffer | string, secret: string): string {
  return createHmac('sha512', secret).update(body).digest('hex');
}

export type NetboxVersion = '3.4' | '3.6.5' | '3.7' | '4.0' | '4.3' | '4.4' | '4.5' | '4.6' | '4.7';
export const NETBOX_VERSIONS: NetboxVersion[] = ['3.4', '3.6.5', '3.7', '4.0', '4.3', '4.4', '4.5', '4.6', '4.7'];

export interface ReportFields {
  id: number;
  device_count: number;
  test_count: number;
  total_passed: number;
  total_count: number;
  low_passed: number;
  low_count: number;
  middle_passed: number;
  middle_count: number;
  high_passed: number;
  high_count: number;
  custom_fields: Record<string, unknown>;
  created: string;
  basePath: string;
}

/** A report's `data` as validity serializes it without a request (relative links). */
export function buildReportData(fields: Partial<ReportFields> = {}): Record<string, unknown> {
  const f: ReportFields = {
    id: 29,
    device_count: 3,
    test_count: 3,
    total_passed: 5,
    total_count: 8,
    low_passed: 0,
    low_count: 0,
    middle_passed: 5,
    middle_count: 8,
    high_passed: 0,
    high_count: 0,
    custom_fields: {},
    created: '2023-04-12T19:36:33.690567Z',
    basePath: '',
    ...fields,
  };
  return {
    id: f.id,
    url: `${f.basePath}/api/plugins/validity/reports/${f.id}/`,
    display: `report-${f.id}`,
    device_count: f.device_count,
    test_count: f.test_count,
    total_passed: f.total_passed,
    total_count: f.total_count,
    low_passed: f.low_passed,
    low_count: f.low_count,
    middle_passed: f.middle_passed,
    middle_count: f.middle_count,
    high_passed: f.high_passed,
    high_count: f.high_count,
    results_url: `${f.basePath}/api/plugins/validity/test-results/?report_id=${f.id}`,
    custom_fields: f.custom_fields,
    created: f.created,
    last_updated: f.created,
  };
}

export interface EnvelopeOptions {
  version?: NetboxVersion;
  event?: string;
  data?: Record<string, unknown>;
  username?: string;
  timestamp?: string;
  /** Extra top-level keys (e.g. `context`). */
  extra?: Record<string, unknown>;
}

/** The envelope exactly as the given NetBox version builds it (NETBOX.md, "Envelope keys by version"). */
export function buildEnvelope(options: EnvelopeOptions = {}): Record<string, unknown> {
  const version = options.version ?? '4.6';
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const v = major * 100 + minor;
  const data = options.data ?? buildReportData();
  const user = options.username ?? 'admin';
  const requestId = 'fc577b60-3f63-4402-8661-547adfefdd87';
  const iso = version === '3.4' || version === '3.6.5' ? false : true;
  const timestamp = options.timestamp ?? (iso ? '2026-03-06T15:11:23.503186+00:00' : '2023-04-12 19:36:37.739906+00:00');
  const env: Record<string, unknown> = { event: options.event ?? 'created', timestamp };
  if (v <= 404) env.model = 'compliancereport';
  if (v >= 404) env.object_type = 'validity.compliancereport';
  if (v < 407) {
    env.username = user;
    env.request_id = requestId;
  }
  env.data = data;
  env.snapshots = {
    prechange: null,
    postchange: { created: data.created, last_updated: data.last_updated, custom_fields: data.custom_fields },
  };
  if (v >= 406) {
    env.request = { id: requestId, method: 'POST', path: '/api/extras/scripts/1/', user };
    if (v >= 407) (env.request as Record<string, unknown>).path_info = '/api/extras/scripts/1/';
  }
  if (v >= 404) env.context = {};
  Object.assign(env, options.extra ?? {});
  return env;
}

/** Raw body bytes for an envelope, serialized like NetBox. */
export function buildBody(options: EnvelopeOptions = {}): Buffer {
  return Buffer.from(pythonJsonDumps(buildEnvelope(options)), 'utf8');
}

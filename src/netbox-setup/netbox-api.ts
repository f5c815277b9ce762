import { buildAuthorization, describeTlsFailure } from '../netbox';
import { buildNetboxUrl, parseNetboxBase } from '../report';

/** The fetch the setup uses (global fetch in production; injected so tests and dry runs can watch). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{
  status: number;
  text(): Promise<string>;
}>;

/** A NetBox API call that failed: `status` 0 means no answer (network, TLS, timeout). */
export class NetboxApiError extends Error {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  /** DRF's error body (`{"field": ["message"]}` or `{"detail": "..."}`), when there is one. */
  readonly body?: unknown;
  constructor(method: string, path: string, status: number, message: string, body?: unknown) {
    super(message);
    this.name = 'NetboxApiError';
    this.method = method;
    this.path = path;
    this.status = status;
    this.body = body;
  }
}

export interface NetboxApi {
  get<T = unknown>(path: string): Promise<T>;
  post<T = unknown>(path: string, body: object): Promise<T>;
  patch<T = unknown>(path: string, body: object): Promise<T>;
}

export interface NetboxApiOptions {
  /** NETBOX_URL, with NetBox's BASE_PATH if it has one; no trailing slash. */
  url: string;
  token: string;
  fetch: FetchLike;
  timeoutMs?: number;
}

/** A minimal JSON client for NetBox's REST API: one request, one answer, errors with DRF's body. */
export function createNetboxApi(options: NetboxApiOptions): NetboxApi {
  const base = parseNetboxBase(options.url);
  const headers = { Authorization: buildAuthorization(options.token), Accept: 'application/json' };
  const call = async <T>(method: string, path: string, body?: object): Promise<T> => {
    // The token goes only to NETBOX_URL's origin, whatever an id in NetBox's answers held.
    const built = buildNetboxUrl(base, path);
    if (!built.ok) throw new NetboxApiError(method, path, 0, `${method} ${path}: refused: ${built.reason}`);
    let res;
    try {
      res = await options.fetch(built.url.href, {
        method,
        headers: body ? { ...headers, 'Content-Type': 'application/json' } : headers,
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const tls = cause?.code ? describeTlsFailure(cause.code, cause.message ?? '') : undefined;
      if (tls) throw new NetboxApiError(method, path, 0, `${method} ${path}: ${tls}`);
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new NetboxApiError(method, path, 0, `${method} ${path}: NetBox did not answer (${why})`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.status >= 200 && res.status < 300) {
      if (json === undefined && text !== '')
        throw new NetboxApiError(
          method,
          path,
          res.status,
          `${method} ${path}: the answer is not JSON (is NETBOX_URL the NetBox address, with its base path?)`,
        );
      return json as T;
    }
    throw new NetboxApiError(method, path, res.status, `${method} ${path}: NetBox answered ${res.status}${describeDrfError(json)}`, json);
  };
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
  };
}

/** DRF's `{"detail": "..."}` or `{"field": ["problem", ...]}` as one readable line. */
function describeDrfError(body: unknown): string {
  if (!body || typeof body !== 'object') return '';
  if (typeof (body as { detail?: unknown }).detail === 'string') return `: ${(body as { detail: string }).detail}`;
  const parts = Object.entries(body as Record<string, unknown>).map(
    ([field, problems]) => `${field}: ${Array.isArray(problems) ? problems.join(' ') : JSON.stringify(problems)}`,
  );
  return parts.length ? `: ${parts.join('; ').slice(0, 1000)}` : '';
}

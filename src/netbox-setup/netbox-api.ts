import http from 'node:http';
import https from 'node:https';
import { buildAuthorization, createNetboxAgent, describeTlsFailure } from '../netbox';
import type { ProxySettings } from '../shared';
import { buildNetboxUrl, parseNetboxBase } from '../report';

/** The fetch the setup uses: {@link createNodeFetch}'s, injected so that a test can watch. */
export type FetchLike = ReturnType<typeof createNodeFetch>;

/** Largest answer read from NetBox during setup (a page of webhooks or event rules is small). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** A NetBox API call that failed: `status` 0 means no answer (network, TLS, timeout). */
export class NetboxApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'NetboxApiError';
  }
}

export type NetboxApi = ReturnType<typeof createNetboxApi>;

/** A minimal JSON client for NetBox's REST API at `url` (NETBOX_URL, with its base path): one request, one answer, errors with DRF's body. */
export function createNetboxApi(options: { url: string; token: string; fetch: FetchLike }) {
  const base = parseNetboxBase(options.url);
  const headers = { Authorization: buildAuthorization(options.token), Accept: 'application/json' };
  const call = async <T>(method: string, path: string, body?: object): Promise<T> => {
    const fail = (status: number, what: string) => new NetboxApiError(status, `${method} ${path}: ${what}`);
    // The token goes only to NETBOX_URL's origin, whatever an id in NetBox's answers held.
    const built = buildNetboxUrl(base, path);
    if (!built.ok) throw fail(0, `refused: ${built.reason}`);
    let res;
    try {
      res = await options.fetch(built.url.href, {
        method,
        headers: body ? { ...headers, 'Content-Type': 'application/json' } : headers,
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const tls = cause?.code ? describeTlsFailure(cause.code, cause.message ?? '') : undefined;
      throw fail(0, tls ?? `NetBox did not answer (${cause?.code ?? cause?.message ?? (error as Error).message})`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.status < 200 || res.status >= 300) throw fail(res.status, `NetBox answered ${res.status}${describeDrfError(json)}`);
    if (json === undefined && text !== '')
      throw fail(res.status, 'the answer is not JSON (is NETBOX_URL the NetBox address, with its base path?)');
    return json as T;
  };
  return {
    get: <T = unknown>(path: string) => call<T>('GET', path),
    post: <T = unknown>(path: string, body: object) => call<T>('POST', path, body),
    patch: (path: string, body: object) => call('PATCH', path, body),
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

/**
 * A fetch over node's http/https, so the setup trusts NETBOX_CA_FILE (and verifies NetBox's
 * certificate) and goes through the environment's proxy like the relay's own NetBox client.
 */
export function createNodeFetch(options: { ca?: string | Buffer; proxy?: ProxySettings } = {}) {
  return (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) =>
    new Promise<{ status: number; text(): Promise<string> }>((resolve, reject) => {
      const target = new URL(url);
      const lib = target.protocol === 'https:' ? https : http;
      const req = lib.request(
        target,
        {
          method: init.method,
          headers: { ...init.headers, ...(init.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(init.body)) } : {}) },
          signal: init.signal,
          agent: createNetboxAgent(target.origin, options.proxy),
          ...(target.protocol === 'https:' ? { ca: options.ca } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy(Object.assign(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`), { code: 'ETOOBIG' }));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, text: () => Promise.resolve(body) });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(Object.assign(new Error(error.message), { cause: error })));
      if (init.body !== undefined) req.write(init.body);
      req.end();
    });
}

import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { buildNetboxUrl, parseNetboxBase, type BuildNetboxUrlOptions } from '../report';
import { systemClock, type Clock } from '../shared';
import { NetboxError, classifyNetboxStatus } from './netbox-error';
import { parsePageStream, type NetboxPage } from './parse-page-stream';

export interface NetboxClientOptions {
  /** NETBOX_URL: origin and, when NetBox runs under a BASE_PATH, that path. */
  url: string;
  /** NETBOX_TOKEN: a v2 token `nbt_<key>.<token>` (NetBox ≥ 4.5) or a legacy 40-hex key. */
  token?: string;
  /** PEM contents of NETBOX_CA_FILE (read by the caller). */
  ca?: string | Buffer;
  /** NETBOX_TLS_REJECT_UNAUTHORIZED (default true). */
  rejectUnauthorized?: boolean;
  /** NETBOX_TIMEOUT_MS: one request may stay silent this long. */
  timeoutMs: number;
  /** Attempts per request for transient failures (5xx, timeouts, resets); default 3. */
  maxAttempts?: number;
  /** First pause between attempts, doubled each time; default 250 ms. */
  retryBaseMs?: number;
  /** Largest page accepted, in bytes (default 256 MiB: 1000 results with large explanations). */
  maxPageBytes?: number;
  /** Largest non-list document accepted, in bytes (default 1 MiB). */
  maxDocumentBytes?: number;
  /** Agent for tests and benchmarks (keep-alive is on by default). */
  agent?: http.Agent;
  /** Sleep, injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock a caller's deadline is measured on (default: the system's). */
  clock?: Clock;
}

export interface RequestBudget {
  /** Epoch milliseconds after which no request is started and running ones are cut. */
  deadline: number;
}

/** A read-only NetBox REST API client for what the relay needs: single documents and paginated lists. */
export interface NetboxClient {
  /** NETBOX_URL without a trailing slash. */
  readonly url: string;
  /**
   * GETs one JSON document (a report, the status). `pathOrUrl` is a NetBox path (it may carry NetBox's
   * base path) or a URL on NETBOX_URL's origin; anything else is refused (`UNSAFE_URL`) before a request.
   */
  getJson(pathOrUrl: string, budget: RequestBudget): Promise<unknown>;
  /**
   * GETs every page of a list (`pathOrUrl` as for getJson), following `next` (rewritten onto
   * NETBOX_URL's origin; a `next` that is not a clean path is refused), and calls
   * `onPage` with each page's results (explanations dropped) once the page is complete, so a page
   * retried after a reset is never delivered twice.
   */
  /** Closes idle keep-alive connections (at shutdown). */
  close(): void;
  streamList(pathOrUrl: string, onPage: (results: Record<string, unknown>[], page: { count: number | null; index: number }) => void, budget: RequestBudget): Promise<{ pages: number; items: number; count: number | null }>;
}

/** The Authorization header NetBox expects: `Bearer` for v2 tokens (`nbt_` prefix, 4.5+), `Token` otherwise. */
export function buildAuthorization(token: string): string {
  return token.startsWith('nbt_') ? `Bearer ${token}` : `Token ${token}`;
}

/** Largest number of pages followed: a `next` loop in a broken proxy must not run forever. */
const MAX_PAGES = 10_000;

/**
 * Creates the client. Nothing is sent until a method is called; every request is bounded by
 * NETBOX_TIMEOUT_MS of silence and by the caller's deadline, and transient failures are retried
 * (exponential pauses) only while the deadline leaves room.
 */
export function createNetboxClient(options: NetboxClientOptions): NetboxClient {
  const clock = options.clock ?? systemClock;
  const base = parseNetboxBase(options.url);
  const baseUrl = `${base.origin}${base.basePath}`;
  const isHttps = base.origin.startsWith('https:');
  const agent =
    options.agent ??
    (isHttps
      ? new https.Agent({ keepAlive: true, maxSockets: 4, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized ?? true })
      : new http.Agent({ keepAlive: true, maxSockets: 4 }));
  const maxAttempts = options.maxAttempts ?? 3;
  const retryBaseMs = options.retryBaseMs ?? 250;
  const maxPageBytes = options.maxPageBytes ?? 256 * 1024 * 1024;
  const maxDocumentBytes = options.maxDocumentBytes ?? 1024 * 1024;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  /** Every NetBox URL is built by buildNetboxUrl; one it refuses is never requested. */
  const resolve = (pathOrUrl: string, resolveOptions?: BuildNetboxUrlOptions): URL => {
    const built = buildNetboxUrl(base, pathOrUrl, resolveOptions);
    if (!built.ok) throw new NetboxError('UNSAFE_URL', `refused to send a request to NetBox: ${built.reason}`);
    return built.url;
  };

  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'compliance-relay' };
  const authorization = options.token ? buildAuthorization(options.token) : undefined;

  /**
   * The only place the token is attached, after the last check that the request goes to
   * NETBOX_URL's origin: whatever built `url`, the token never leaves for another host.
   */
  function headersFor(url: URL): Record<string, string> {
    if (url.origin !== base.origin || url.username !== '' || url.password !== '') {
      throw new NetboxError('UNSAFE_URL', `refused to send the NetBox token to ${url.origin}: it is not NETBOX_URL's origin ${base.origin}`);
    }
    return authorization ? { ...headers, Authorization: authorization } : headers;
  }

  function open(url: URL, budget: RequestBudget): Promise<IncomingMessage> {
    return new Promise((resolvePromise, reject) => {
      let requestHeaders: Record<string, string>;
      try {
        requestHeaders = headersFor(url);
      } catch (error) {
        reject(error);
        return;
      }
      const remaining = budget.deadline - clock.now();
      if (remaining <= 0) {
        reject(new NetboxError('TIMEOUT', 'the time budget for NetBox ran out'));
        return;
      }
      const request = (isHttps ? https : http).request(url, { method: 'GET', headers: requestHeaders, agent });
      let answer: IncomingMessage | undefined;
      // Destroying the response too, with the reason, lets the body's reader say "timeout", not "reset".
      const abort = (error: NetboxError) => (answer && !answer.complete ? answer.destroy(error) : request.destroy(error));
      // The whole exchange (headers and body) must end before the deadline.
      const cut = setTimeout(() => abort(new NetboxError('TIMEOUT', `NetBox did not finish answering within the time budget (${url.pathname})`)), remaining);
      cut.unref?.();
      request.setTimeout(Math.min(options.timeoutMs, remaining), () =>
        abort(new NetboxError('TIMEOUT', `NetBox sent nothing for ${options.timeoutMs} ms (${url.pathname})`)),
      );
      request.on('close', () => clearTimeout(cut));
      request.on('error', (error) => reject(toNetboxError(error)));
      request.on('response', (response) => {
        answer = response;
        response.on('close', () => clearTimeout(cut));
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolvePromise(response);
          return;
        }
        readBounded(response, 64 * 1024)
          .then((text) => reject(classifyNetboxStatus(status, url.pathname + url.search, detailOf(text))))
          .catch(() => reject(classifyNetboxStatus(status, url.pathname + url.search)));
      });
      request.end();
    });
  }

  async function withRetries<T>(what: (attempt: number) => Promise<T>, budget: RequestBudget): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await what(attempt);
      } catch (error) {
        const failure = toNetboxError(error);
        const pause = retryBaseMs * 2 ** (attempt - 1);
        if (!failure.retryable || attempt >= maxAttempts || clock.now() + pause >= budget.deadline) throw failure;
        await sleep(pause);
      }
    }
  }

  return {
    url: baseUrl,
    close() {
      if (!options.agent) agent.destroy();
    },
    async getJson(pathOrUrl, budget) {
      const url = resolve(pathOrUrl);
      return withRetries(async () => {
        const response = await open(url, budget);
        const text = await readBounded(response, maxDocumentBytes);
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new NetboxError('PROTOCOL', `NetBox sent something that is not JSON for ${url.pathname} (is NETBOX_URL the NetBox API?)`);
        }
      }, budget);
    },
    async streamList(pathOrUrl, onPage, budget) {
      let url: URL | null = resolve(pathOrUrl);
      const seen = new Set<string>();
      let pages = 0;
      let items = 0;
      let count: number | null = null;
      while (url) {
        if (seen.has(url.href) || pages >= MAX_PAGES) throw new NetboxError('PROTOCOL', `NetBox's "next" links loop (${url.pathname}${url.search})`);
        seen.add(url.href);
        const pageUrl: URL = url;
        const page: NetboxPage = await withRetries(async () => parsePageStream(await open(pageUrl, budget), maxPageBytes), budget);
        count ??= page.count;
        onPage(page.results, { count, index: pages });
        pages += 1;
        items += page.results.length;
        url = page.next ? resolve(page.next, { rebaseForeignOrigin: true }) : null;
      }
      return { pages, items, count };
    },
  };
}

function readBounded(response: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy(new NetboxError('PROTOCOL', `a NetBox answer exceeded ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/** NetBox (Django REST framework) explains refusals as `{"detail": "..."}`. */
function detailOf(text: string): string | undefined {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === 'string') return detail.slice(0, 300);
    // A 400 for an unknown filter value lists the field: {"report_id": ["Select a valid choice..."]}.
    const first = Object.entries(JSON.parse(text) as Record<string, unknown>)[0];
    if (first) return `${first[0]}: ${JSON.stringify(first[1]).slice(0, 300)}`;
  } catch {
    // Not JSON: a proxy's page; the status says enough.
  }
  return undefined;
}

function toNetboxError(error: unknown): NetboxError {
  if (error instanceof NetboxError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
  const message = (error as Error).message ?? String(error);
  if (/^(ETIMEDOUT|ESOCKETTIMEDOUT)$/.test(code)) return new NetboxError('TIMEOUT', `NetBox did not answer (${code})`, { cause: error, detail: code });
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) {
    return new NetboxError('UNREACHABLE', `the TLS connection to NetBox failed (${code}: ${message}); set NETBOX_CA_FILE to NetBox's CA`, { cause: error, detail: code });
  }
  return new NetboxError('UNREACHABLE', `cannot reach NetBox (${code}: ${message})`, { cause: error, detail: code });
}

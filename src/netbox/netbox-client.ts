import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { setTimeout as wait } from 'node:timers/promises';
import type * as HttpProxyAgentModule from 'http-proxy-agent';
import type * as HttpsProxyAgentModule from 'https-proxy-agent';
import { buildNetboxUrl, parseNetboxBase, type BuildNetboxUrlOptions } from '../report';
import { chooseProxy, createSecretMask, describeProxyUrl, systemClock, type Clock, type ProxySettings } from '../shared';
import { NetboxError, classifyNetboxStatus, describeTlsFailure } from './netbox-error';
import { parsePageStream } from './parse-page-stream';

/**
 * `url`: NETBOX_URL with its BASE_PATH; `ca`: NETBOX_CA_FILE's PEM (certificates are always verified); `timeoutMs`: the
 * longest silence of one request; `retryBaseMs` doubles per attempt; `proxy`: the environment's; `agent` for tests.
 */
export interface NetboxClientOptions {
  url: string;
  token?: string;
  ca?: string | Buffer;
  timeoutMs: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  agent?: http.Agent;
  proxy?: ProxySettings;
  clock?: Clock;
}

/** `deadline`: epoch milliseconds after which no request is started and running ones are cut. */
export type RequestBudget = { deadline: number };

/** Receives each complete page's results; answering `false` stops the list there. */
type PageHandler = (results: Record<string, unknown>[]) => unknown;

/** A read-only NetBox REST API client for what the relay needs: single documents and paginated lists. */
export type NetboxClient = ReturnType<typeof createNetboxClient>;

/** Largest number of pages followed: a `next` loop in a broken proxy must not run forever. */
const MAX_PAGES = 10_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;

type ClientContext = ReturnType<typeof resolveOptions>;

const HEADERS: Readonly<Record<string, string>> = { Accept: 'application/json', 'User-Agent': 'compliance-relay' };

/** Every request is bounded by `timeoutMs` of silence and the caller's deadline; transient failures retry while it leaves room. */
export function createNetboxClient(options: NetboxClientOptions) {
  const context = resolveOptions(options);
  const { base, agent } = context;
  return {
    url: `${base.origin}${base.basePath}`,
    /** NETBOX_TOKEN is set: without one, validity's results are not readable and nothing is asked. */
    hasToken: options.token !== undefined,
    close(): void {
      if (!options.agent) agent.destroy();
    },
    /** GETs one JSON document: a NetBox path or a URL on NETBOX_URL's origin; anything else is UNSAFE_URL, never sent. */
    getJson: (pathOrUrl: string, budget: RequestBudget): Promise<unknown> => fetchJson(context, pathOrUrl, budget),
    /** POSTs or PATCHes a JSON body to a NetBox path (as for getJson) and answers NetBox's JSON; a write is sent once, never retried. */
    sendJson: (method: 'POST' | 'PATCH', path: string, body: object, budget: RequestBudget): Promise<unknown> =>
      fetchJson(context, path, budget, { method, body: JSON.stringify(body) }),
    /**
     * GETs every page of a list, following `next` (re-based onto NETBOX_URL's origin), and hands `onPage` each page's results
     * (explanations dropped) once complete, so a page retried after a reset is never delivered twice.
     */
    streamList: (pathOrUrl: string, onPage: PageHandler, budget: RequestBudget) => streamPages(context, pathOrUrl, onPage, budget),
  };
}

function resolveOptions(options: NetboxClientOptions) {
  const base = parseNetboxBase(options.url);
  const proxyUrl = options.proxy && chooseProxy(base.origin, options.proxy);
  return {
    base,
    agent: options.agent ?? createNetboxAgent(base.origin, proxyUrl, { keepAlive: true, maxSockets: 4 }),
    ca: options.ca,
    /** The proxy NetBox is reached through (no credentials), named when it cannot be reached. */
    proxy: proxyUrl && describeProxyUrl(proxyUrl),
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs,
    // NetBox takes v2 tokens (`nbt_` prefix, 4.5+) as `Bearer`, legacy keys as `Token`.
    authorization: options.token && `${options.token.startsWith('nbt_') ? 'Bearer' : 'Token'} ${options.token}`,
    /** Hides the token in what NetBox (or a proxy before it) answers: a 403's `detail` may echo the header. */
    mask: createSecretMask([options.token]),
    maxAttempts: options.maxAttempts ?? 3,
    retryBaseMs: options.retryBaseMs ?? 250,
  };
}

/** Through `proxyUrl` when the environment names one (CONNECT for https), else direct; proxy agents load only when used. */
function createNetboxAgent(origin: string, proxyUrl: string | undefined, options: http.AgentOptions): http.Agent {
  const secure = origin.startsWith('https:');
  if (proxyUrl === undefined) return secure ? new https.Agent(options) : new http.Agent(options);
  /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose (above) */
  if (secure) return new (require('https-proxy-agent') as typeof HttpsProxyAgentModule).HttpsProxyAgent(proxyUrl, options);
  return new (require('http-proxy-agent') as typeof HttpProxyAgentModule).HttpProxyAgent(proxyUrl, options);
  /* eslint-enable @typescript-eslint/no-require-imports */
}

function resolveUrl(context: ClientContext, pathOrUrl: string, resolveOptions?: BuildNetboxUrlOptions): URL {
  const built = buildNetboxUrl(context.base, pathOrUrl, resolveOptions);
  if (!built.ok) throw new NetboxError('UNSAFE_URL', `refused to send a request to NetBox: ${built.reason}`);
  return built.url;
}

type Write = { method: 'POST' | 'PATCH'; body: string };

/** Requests `url` and resolves with a 2xx response whose body is still to be read; anything else rejects with a NetboxError. */
function openResponse(context: ClientContext, url: URL, budget: RequestBudget, write?: Write): Promise<IncomingMessage> {
  return new Promise((resolvePromise, reject) => {
    const { base, authorization } = context;
    // The only place the token is attached, after the last origin check (a throw here rejects before any request).
    if (url.origin !== base.origin || url.username !== '' || url.password !== '')
      throw new NetboxError(
        'UNSAFE_URL',
        `refused to send the NetBox token to ${url.origin}: it is not NETBOX_URL's origin ${base.origin}`,
      );
    const headers: Record<string, string> = authorization ? { ...HEADERS, Authorization: authorization } : { ...HEADERS };
    if (write) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(write.body)) });
    const remaining = budget.deadline - context.clock.now();
    if (remaining <= 0) {
      reject(new NetboxError('TIMEOUT', 'the time budget for NetBox ran out'));
      return;
    }
    const transport = url.protocol === 'https:' ? https : http;
    // For https, NETBOX_CA_FILE's CA when given (through a proxy too); the certificate is always verified.
    const request = transport.request(url, { method: write?.method ?? 'GET', headers, agent: context.agent, ca: context.ca });
    let answer: IncomingMessage | undefined;
    // Destroying the response too, with the reason, lets the body's reader say "timeout", not "reset".
    const abort = (error: NetboxError) => (answer && !answer.complete ? answer.destroy(error) : request.destroy(error));
    // The whole exchange (headers and body) must end before the deadline.
    const cut = setTimeout(
      () => abort(new NetboxError('TIMEOUT', `NetBox did not finish answering within the time budget (${url.pathname})`)),
      remaining,
    );
    cut.unref?.();
    request.setTimeout(Math.min(context.timeoutMs, remaining), () =>
      abort(new NetboxError('TIMEOUT', `NetBox sent nothing for ${context.timeoutMs} ms (${url.pathname})`)),
    );
    request.on('close', () => clearTimeout(cut));
    request.on('error', (error) => reject(toNetboxError(error, context.proxy)));
    request.on('response', (response) => {
      answer = response;
      response.on('close', () => clearTimeout(cut));
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolvePromise(response);
        return;
      }
      readBounded(response, 64 * 1024)
        .then((text) => {
          // Masked as text (an echo in any form) and again once JSON escapes are read.
          const detail = detailOf(context.mask(text));
          reject(classifyNetboxStatus(status, url.pathname + url.search, detail === undefined ? undefined : context.mask(detail)));
        })
        .catch(() => reject(classifyNetboxStatus(status, url.pathname + url.search)));
    });
    request.end(write?.body);
  });
}

/** Runs `what` again after a retryable failure, with doubling pauses, while attempts and the deadline allow. */
async function withRetries<T>(context: ClientContext, what: () => Promise<T>, budget: RequestBudget): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await what();
    } catch (error) {
      const failure = toNetboxError(error);
      const pause = context.retryBaseMs * 2 ** (attempt - 1);
      if (!failure.retryable || attempt >= context.maxAttempts || context.clock.now() + pause >= budget.deadline) throw failure;
      await wait(pause);
    }
  }
}

/** GETs one JSON document (at most MAX_DOCUMENT_BYTES), with retries; or sends `write` once. */
async function fetchJson(context: ClientContext, pathOrUrl: string, budget: RequestBudget, write?: Write): Promise<unknown> {
  const url = resolveUrl(context, pathOrUrl);
  const once = async () => {
    const text = await readBounded(await openResponse(context, url, budget, write), MAX_DOCUMENT_BYTES);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new NetboxError('PROTOCOL', `NetBox sent something that is not JSON for ${url.pathname} (is NETBOX_URL the NetBox API?)`);
    }
  };
  return write ? await once() : await withRetries(context, once, budget);
}

async function streamPages(context: ClientContext, pathOrUrl: string, onPage: PageHandler, budget: RequestBudget) {
  let url: URL | null = resolveUrl(context, pathOrUrl);
  const seen = new Set<string>();
  let pages = 0;
  let items = 0;
  let count: number | null = null;
  while (url) {
    if (seen.has(url.href) || pages >= MAX_PAGES)
      throw new NetboxError('PROTOCOL', `NetBox's "next" links loop (${url.pathname}${url.search})`);
    seen.add(url.href);
    const pageUrl: URL = url;
    const page = await withRetries(context, async () => parsePageStream(await openResponse(context, pageUrl, budget)), budget);
    count ??= page.count;
    const more = onPage(page.results);
    pages += 1;
    items += page.results.length;
    url = more === false ? null : page.next ? resolveUrl(context, page.next, { rebaseForeignOrigin: true }) : null;
  }
  return { pages, items, count };
}

async function readBounded(response: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw new NetboxError('PROTOCOL', `a NetBox answer exceeded ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** DRF explains refusals as `{"detail": "..."}`, or per field (`{"report_id": ["Select a valid choice..."]}`). */
function detailOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body.detail === 'string') return body.detail.slice(0, 300);
    const fields = Object.entries(body).map(
      ([field, problems]) => `${field}: ${Array.isArray(problems) ? problems.join(' ') : JSON.stringify(problems)}`,
    );
    if (fields.length) return fields.join('; ').slice(0, 1000);
  } catch {
    // Not JSON: a proxy's page; the status says enough.
  }
  return undefined;
}

function toNetboxError(error: unknown, proxy?: string): NetboxError {
  if (error instanceof NetboxError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
  const message = `${(error as Error).message ?? String(error)}${proxy ? `, through the proxy ${proxy}` : ''}`;
  if (/^(ETIMEDOUT|ESOCKETTIMEDOUT)$/.test(code))
    return new NetboxError('TIMEOUT', `NetBox did not answer (${code})`, { cause: error, detail: code });
  const words = describeTlsFailure(code, message) ?? `cannot reach NetBox (${code}: ${message})`;
  return new NetboxError('UNREACHABLE', words, { cause: error, detail: code });
}

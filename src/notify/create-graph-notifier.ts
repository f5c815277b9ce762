import { systemClock } from '../shared';
import { createOAuth2TokenCache, type TokenCache } from './fetch-access-token';
import type { OAuth2Config } from './oauth2-settings';
import type { NotifierIo, Sender } from './notifier';

/** MAIL_TRANSPORT=graph: mails go to Microsoft Graph's sendMail as `sender`, with a token from `oauth2`. */
export interface GraphConfig {
  url: string;
  sender: string;
  timeoutMs: number;
  concurrency: number;
  oauth2: OAuth2Config;
}

/**
 * A failed sendMail call, with the code that says whether a retry can help (FAILURE_CATALOGUE):
 * `retryAfterMs` from Graph's Retry-After, which the queue's pause then honours.
 */
export class GraphError extends Error {
  readonly code: 'GRAPH_THROTTLED' | 'GRAPH_UNAVAILABLE' | 'GRAPH_ACCESS_DENIED' | 'GRAPH_REJECTED' | 'OAUTH2_REFUSED';
  readonly status?: number;
  readonly retryAfterMs?: number;
  constructor(code: GraphError['code'], message: string, options: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'GraphError';
    this.code = code;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Graph's error bodies are small; the rest of a long one is not read. */
const ERROR_BODY_MAX_CHARS = 16 * 1024;
/** A 429 without Retry-After: wait this long before the next try. */
const DEFAULT_THROTTLE_MS = 60_000;

/**
 * Microsoft Graph's sendMail as a sender, for tenants that turned SMTP AUTH off: the mail's own bytes, as they
 * would go to an SMTP server (with a Bcc header, see withBccHeader), posted base64-encoded as `text/plain` to
 * `/v1.0/users/{sender}/sendMail`, which answers 202 with no body. Recipients come from the MIME headers; the
 * token is the app's (client credentials, Mail.Send application permission).
 */
export function createGraphSender(config: GraphConfig, io: NotifierIo): Sender {
  const tokens = createOAuth2TokenCache(config.oauth2, io);
  const clock = io.clock ?? systemClock;
  const fetchImpl = io.fetch ?? fetch;
  const endpoint = `${config.url}/v1.0/users/${encodeURIComponent(config.sender)}/sendMail`;
  return {
    async send(mail) {
      const body = withBccHeader(mail.raw, mail.envelope.to).toString('base64');
      const { res, token } = await postWithToken(tokens, (accessToken) =>
        postMime(fetchImpl, endpoint, accessToken, body, config.timeoutMs),
      );
      if (res.status === 202 || res.ok) {
        const requestId = res.headers.get('request-id');
        await res.body?.cancel();
        return { response: `${res.status} Accepted by Microsoft Graph${requestId ? ` (request-id ${requestId})` : ''}` };
      }
      const failure = await classifyGraphResponse(res, clock.now());
      if (failure.code === 'OAUTH2_REFUSED') tokens.invalidate(token.accessToken);
      throw failure;
    },
    async verify(onStep) {
      const token = await tokens.get();
      onStep?.(`token fetched (expires ${new Date(token.expiresAt).toISOString()})`);
      onStep?.(`Microsoft Graph: mail will be sent as ${config.sender} via ${endpoint} (not tried: it would send a mail)`);
    },
    close() {
      return Promise.resolve();
    },
  };
}

/**
 * Graph takes the recipients from the MIME headers only, but the relay's stored message (what the
 * dashboard shows) has no Bcc header: the blind copies are in the envelope alone. They are added here
 * as a Bcc header, which Exchange delivers to and removes from the copies it delivers.
 */
export function withBccHeader(raw: Buffer, envelopeTo: string[]): Buffer {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const header = (end === -1 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const shown = new Set<string>();
  for (const line of header.split(/\r?\n/)) {
    if (!/^(to|cc):/i.test(line)) continue;
    for (const address of line.slice(3).match(/[^\s<>,;:"]+@[^\s<>,;"]+/g) ?? []) shown.add(address.toLowerCase());
  }
  const blind = envelopeTo.filter((address) => !shown.has(address.toLowerCase()));
  if (blind.length === 0) return raw;
  const newline = /\r\n/.test(text.slice(0, Math.max(end, 0) + 2)) ? '\r\n' : '\n';
  return Buffer.concat([Buffer.from(`Bcc: ${blind.join(', ')}${newline}`, 'latin1'), raw]);
}

/**
 * Posts with the cached token; a 401 (the token was revoked, or expired early by the server's clock)
 * is tried once more with a renewed token, as nodemailer does for SMTP: a 401 means nothing was sent.
 */
async function postWithToken(
  tokens: TokenCache,
  post: (accessToken: string) => Promise<Response>,
): Promise<{ res: Response; token: { accessToken: string } }> {
  const first = await tokens.get();
  const res = await post(first.accessToken);
  if (res.status !== 401) return { res, token: first };
  await res.body?.cancel();
  tokens.invalidate(first.accessToken);
  const renewed = await tokens.get({ renew: true });
  return { res: await post(renewed.accessToken), token: renewed };
}

async function postMime(
  fetchImpl: typeof fetch,
  endpoint: string,
  accessToken: string,
  body: string,
  timeoutMs: number,
): Promise<Response> {
  try {
    return await fetchImpl(endpoint, {
      method: 'POST',
      headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'text/plain' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const err = error as { name?: string; message?: string; cause?: { code?: string } };
    const why = err?.name === 'TimeoutError' ? 'timed out' : String(err?.cause?.code ?? err?.message ?? error).slice(0, 200);
    throw new GraphError('GRAPH_UNAVAILABLE', `Microsoft Graph did not answer: ${why}`, { cause: error });
  }
}

/** Graph's answer as a failure, by its status (the codes' words say what each means), with Graph's own `{"error": {"code", "message"}}`. */
export async function classifyGraphResponse(res: Response, now: number): Promise<GraphError> {
  const text = (await res.text()).slice(0, ERROR_BODY_MAX_CHARS);
  let detail = '';
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof body.error?.code === 'string' ? body.error.code : '';
    const message = typeof body.error?.message === 'string' ? body.error.message : '';
    detail = `${code}${code && message ? ': ' : ''}${message}`.replace(/\s+/g, ' ').slice(0, 300);
  } catch {
    detail = '';
  }
  const message = `Microsoft Graph answered ${res.status}${detail ? ` ${detail}` : ''}`;
  const retryAfterMs = parseRetryAfterMs(res.headers.get('retry-after'), now);
  const status = res.status;
  if (status === 429) return new GraphError('GRAPH_THROTTLED', message, { status, retryAfterMs: retryAfterMs ?? DEFAULT_THROTTLE_MS });
  if (status >= 500) return new GraphError('GRAPH_UNAVAILABLE', message, { status, retryAfterMs });
  if (status === 401) return new GraphError('OAUTH2_REFUSED', message, { status });
  if (status === 403 || status === 404) return new GraphError('GRAPH_ACCESS_DENIED', message, { status });
  return new GraphError('GRAPH_REJECTED', message, { status });
}

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

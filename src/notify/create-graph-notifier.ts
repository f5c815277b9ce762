import { systemClock } from '../shared';
import { createOAuth2TokenCache, postOrFail, readBoundedJson } from './fetch-access-token';
import { TransportError, type NotifierIo, type Sender } from './notifier';
import type { OAuth2Config } from './oauth2-settings';

/** MAIL_TRANSPORT=graph: Graph's sendMail as `sender` (MAIL_FROM's address), with a token from `oauth2`. */
export type GraphConfig = { url: string; sender: string; timeoutMs: number; oauth2: OAuth2Config };

/** A 429 without Retry-After: wait this long before the next try. */
const DEFAULT_THROTTLE_MS = 60_000;

/** Graph's sendMail (for tenants without SMTP AUTH): the MIME bytes base64 as text/plain, with the app's Mail.Send token. */
export function createGraphSender(config: GraphConfig, io: NotifierIo): Sender {
  const tokens = createOAuth2TokenCache(config.oauth2, io);
  const endpoint = `${config.url}/v1.0/users/${encodeURIComponent(config.sender)}/sendMail`;
  const post = (accessToken: string, body: string) =>
    postOrFail(io.fetch ?? fetch, endpoint, {
      headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'text/plain' },
      body,
      timeoutMs: config.timeoutMs,
      failure: ['GRAPH_UNAVAILABLE', 'Microsoft Graph'],
    });
  return {
    async send(mail) {
      const body = withBccHeader(mail.raw, mail.envelope.to).toString('base64');
      let token = await tokens.get();
      let res = await post(token.accessToken, body);
      // A 401 (token revoked or expired early) sent nothing: tried once more with a renewed token.
      if (res.status === 401) {
        await res.body?.cancel();
        tokens.invalidate(token.accessToken);
        token = await tokens.get({ renew: true });
        res = await post(token.accessToken, body);
      }
      if (res.ok) {
        const requestId = res.headers.get('request-id');
        await res.body?.cancel();
        return { response: `${res.status} Accepted by Microsoft Graph${requestId ? ` (request-id ${requestId})` : ''}` };
      }
      const failure = await classifyGraphResponse(res, (io.clock ?? systemClock).now());
      if (failure.code === 'OAUTH2_REFUSED') tokens.invalidate(token.accessToken);
      throw failure;
    },
    async verify(onStep) {
      const token = await tokens.get();
      onStep?.(`token fetched (expires ${new Date(token.expiresAt).toISOString()})`);
      onStep?.(`Microsoft Graph: mail will be sent as ${config.sender} via ${endpoint} (not tried: it would send a mail)`);
    },
    close: () => Promise.resolve(),
  };
}

/** Graph reads recipients from the headers only: the envelope's blind copies become a Bcc header, which Exchange strips. */
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

/** Graph's answer as a failure, by its status, with Graph's own `{"error": {"code", "message"}}`. */
export async function classifyGraphResponse(res: Response, now: number): Promise<TransportError> {
  const { error } = (await readBoundedJson(res)) as { error?: { code?: unknown; message?: unknown } | null };
  const code = typeof error?.code === 'string' ? error.code : '';
  const text = typeof error?.message === 'string' ? error.message : '';
  const detail = `${code}${code && text ? ': ' : ''}${text}`.replace(/\s+/g, ' ').slice(0, 300);
  const message = `Microsoft Graph answered ${res.status}${detail ? ` ${detail}` : ''}`;
  const retryAfterMs = parseRetryAfterMs(res.headers.get('retry-after'), now);
  const { status } = res;
  if (status === 429) return new TransportError('GRAPH_THROTTLED', message, { retryAfterMs: retryAfterMs ?? DEFAULT_THROTTLE_MS });
  if (status >= 500) return new TransportError('GRAPH_UNAVAILABLE', message, { retryAfterMs });
  if (status === 401) return new TransportError('OAUTH2_REFUSED', message);
  return new TransportError(status === 403 || status === 404 ? 'GRAPH_ACCESS_DENIED' : 'GRAPH_REJECTED', message);
}

/** Retry-After (seconds or an HTTP date, RFC 9110 §10.2.3) in ms from `now`. */
export function parseRetryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

import { createHash, createPrivateKey, randomUUID, X509Certificate } from 'node:crypto';
import type * as Jose from 'jose';
import { TransportError, type NotifierIo } from './notifier';
import { oauth2Secrets, type OAuth2Config } from './oauth2-settings';
import { createSecretMask, systemClock, type Clock } from '../shared';

/** An OAuth2 access token and when it expires (epoch ms, by the injected clock). */
export type AccessToken = { accessToken: string; expiresAt: number };

/** One access token shared by every connection (or request) of a notifier. */
export type TokenCache = ReturnType<typeof createTokenCache>;

/** Tokens are renewed this long before they expire, or half-way through a shorter lifetime. */
const TOKEN_REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

/** Renews the token before it lapses, one request for the whole pool; a failure is not cached. */
export function createTokenCache(options: { fetchToken: () => Promise<AccessToken>; clock: Clock }) {
  let cached: (AccessToken & { renewAt: number }) | undefined;
  let inFlight: Promise<AccessToken> | undefined;
  return {
    /** `renew`: fetch anew (the server refused the cached one). */
    get({ renew = false } = {}): Promise<AccessToken> {
      if (!renew && cached && options.clock.now() < cached.renewAt) return Promise.resolve(cached);
      inFlight ??= (async () => {
        const fetchedAt = options.clock.now();
        try {
          const token = await options.fetchToken();
          const lifetime = Math.max(0, token.expiresAt - fetchedAt);
          cached = { ...token, renewAt: token.expiresAt - Math.min(TOKEN_REFRESH_BEFORE_EXPIRY_MS, lifetime / 2) };
          return token;
        } finally {
          inFlight = undefined;
        }
      })();
      return inFlight;
    },
    invalidate(accessToken: string): void {
      if (cached?.accessToken === accessToken) cached = undefined;
    },
  };
}

/** The cached token of `oauth2`'s app, requested with `io`'s fetch and dated by its clock. */
export function createOAuth2TokenCache(oauth2: OAuth2Config, io: Pick<NotifierIo, 'clock' | 'fetch'>): TokenCache {
  const clock = io.clock ?? systemClock;
  return createTokenCache({ fetchToken: createAccessTokenFetcher(oauth2, { clock, fetch: io.fetch }), clock });
}

/** Token answers and Graph's error bodies are small JSON objects; anything longer is not one. */
const RESPONSE_MAX_BYTES = 64 * 1024;
/** When an answer leaves out expires_in, the token is renewed soon rather than trusted for long. */
const DEFAULT_TOKEN_LIFETIME_SECONDS = 300;

/** Microsoft's client credentials (RFC 7523 §2.2 with a certificate) or Google's JWT bearer grant (§2.1). */
export function createAccessTokenFetcher(config: OAuth2Config, deps: { clock: Clock; fetch?: typeof fetch }): () => Promise<AccessToken> {
  const host = new URL(config.tokenUrl).host;
  return async () => {
    const form = await buildTokenForm(config, deps.clock.now());
    const res = await postOrFail(deps.fetch ?? fetch, config.tokenUrl, {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form.toString(),
      timeoutMs: config.timeoutMs,
      failure: ['OAUTH2_UNAVAILABLE', `token endpoint ${host}`],
    });
    const body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = await readBoundedJson(res);
    if (res.ok && typeof body.access_token === 'string' && body.access_token !== '') {
      const seconds = Number(body.expires_in);
      const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TOKEN_LIFETIME_SECONDS;
      return { accessToken: body.access_token, expiresAt: deps.clock.now() + lifetime * 1000 };
    }
    // The endpoint may echo the form it was sent, client secret included: masked before it is cut short.
    const mask = createSecretMask(oauth2Secrets(config));
    const error = typeof body.error === 'string' ? mask(body.error).slice(0, 100) : undefined;
    const description =
      typeof body.error_description === 'string' ? `: ${mask(body.error_description).split(/\r?\n/)[0].slice(0, 300)}` : '';
    // RFC 6749 §5.2: these statuses with an error code mean the credentials or grant are wrong, not that the service is down.
    if ([400, 401, 403].includes(res.status) && error !== undefined)
      throw new TransportError('OAUTH2_REFUSED', `token endpoint ${host} refused the credentials (${res.status} ${error}${description})`);
    const said = error ? ` ${error}${description}` : res.ok ? ' without an access_token' : '';
    throw new TransportError('OAUTH2_UNAVAILABLE', `token endpoint ${host} answered ${res.status}${said}`);
  };
}

/** Microsoft's certificate JWT names it by SHA-1 and SHA-256 thumbprints (required); Google's may live an hour, its limit. */
async function buildTokenForm(config: OAuth2Config, nowMs: number): Promise<URLSearchParams> {
  const now = Math.floor(nowMs / 1000);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only OAuth2 relays sign assertions
  const { SignJWT } = require('jose') as typeof Jose;
  const sign = (jwt: Jose.SignJWT, lifetimeSeconds: number) =>
    jwt
      .setIssuer(config.clientId)
      .setAudience(config.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .sign(createPrivateKey(config.privateKeyPem ?? ''));
  if (config.provider === 'google') {
    const jwt = new SignJWT({ scope: config.scope }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setSubject(config.subject);
    return new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await sign(jwt, 60 * 60) });
  }
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: config.clientId, scope: config.scope });
  if (config.clientSecret !== undefined) {
    form.set('client_secret', config.clientSecret);
    return form;
  }
  const der = new X509Certificate(config.certificatePem ?? '').raw;
  const jwt = new SignJWT({})
    .setProtectedHeader({
      alg: 'RS256',
      typ: 'JWT',
      x5t: createHash('sha1').update(der).digest('base64url'),
      'x5t#S256': createHash('sha256').update(der).digest('base64url'),
    })
    .setSubject(config.clientId)
    .setJti(randomUUID())
    .setNotBefore(now);
  form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  form.set('client_assertion', await sign(jwt, 5 * 60));
  return form;
}

/** POSTs `body` (no redirect followed, within `timeoutMs`); no answer rejects with the `failure` code, saying why. */
export async function postOrFail(
  fetchImpl: typeof fetch,
  url: string,
  request: { headers: Record<string, string>; body: string; timeoutMs: number; failure: [code: string, peer: string] },
): Promise<Response> {
  const { headers, body, timeoutMs, failure } = request;
  try {
    return await fetchImpl(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (error) {
    const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    const why =
      err?.name === 'TimeoutError' ? 'timed out' : String(err?.cause?.code ?? err?.cause?.message ?? err?.message ?? error).slice(0, 200);
    throw new TransportError(failure[0], `${failure[1]} did not answer: ${why}`, { cause: error });
  }
}

/** The answer's JSON object, read up to {@link RESPONSE_MAX_BYTES}; `{}` when it is none (not JSON, too long, cut off). */
export async function readBoundedJson(res: Response): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > RESPONSE_MAX_BYTES) break;
      chunks.push(Buffer.from(chunk));
    }
    const json: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

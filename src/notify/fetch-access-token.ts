import { createHash, createPrivateKey, randomUUID, X509Certificate } from 'node:crypto';
import type * as Jose from 'jose';
import type { NotifierIo } from './notifier';
import type { OAuth2Config } from './oauth2-settings';
import { createSecretMask, systemClock, type Clock } from '../shared';

/** An OAuth2 access token and when it stops being valid (epoch ms, by the injected clock). */
export interface AccessToken {
  accessToken: string;
  expiresAt: number;
}

/** Gets a new access token from the token endpoint; rejects with an {@link OAuth2Error}. */
export type FetchAccessToken = () => Promise<AccessToken>;

/**
 * A token request that failed: the endpoint refused the app's credentials (`OAUTH2_REFUSED`), or gave
 * no token (`OAUTH2_UNAVAILABLE`). The code is also kept as `oauth2Code`, since nodemailer replaces
 * `code` with EAUTH when the error reaches it through its provision callback.
 */
export class OAuth2Error extends Error {
  readonly code: OAuth2Error['oauth2Code'];
  readonly oauth2Code: 'OAUTH2_REFUSED' | 'OAUTH2_UNAVAILABLE';
  constructor(code: OAuth2Error['oauth2Code'], message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'OAuth2Error';
    this.code = code;
    this.oauth2Code = code;
  }
}

/** One access token shared by every connection (or request) of a notifier. */
export interface TokenCache {
  /** A token valid for a while yet; one request in flight at most. `renew`: fetch anew (the server refused the cached one). */
  get(options?: { renew?: boolean }): Promise<AccessToken>;
  /** Forgets `accessToken` if it is the cached one (a server refused it): the next `get` fetches anew. */
  invalidate(accessToken: string): void;
}

/** Tokens are renewed this long before they expire, or half-way through a shorter lifetime. */
const TOKEN_REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

/**
 * Caches the token of `fetchToken` and renews it before it expires, so that no connection logs in
 * with a token about to lapse and a pool of connections asks the token endpoint once, not once per
 * connection. A failed request is not cached: the next `get` tries again.
 */
export function createTokenCache(options: { fetchToken: FetchAccessToken; clock: Clock }): TokenCache {
  let cached: (AccessToken & { renewAt: number }) | undefined;
  let inFlight: Promise<AccessToken> | undefined;

  const fetchNew = (): Promise<AccessToken> => {
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
  };

  return {
    get(getOptions = {}) {
      if (!getOptions.renew && cached && options.clock.now() < cached.renewAt) return Promise.resolve(cached);
      return fetchNew();
    },
    invalidate(accessToken) {
      if (cached?.accessToken === accessToken) cached = undefined;
    },
  };
}

/** The cached token of `oauth2`'s app, requested with `io`'s fetch and dated by its clock. */
export function createOAuth2TokenCache(oauth2: OAuth2Config, io: Pick<NotifierIo, 'clock' | 'fetch'>): TokenCache {
  const clock = io.clock ?? systemClock;
  return createTokenCache({ fetchToken: createAccessTokenFetcher(oauth2, { clock, fetch: io.fetch }), clock });
}

/** Token answers are small JSON objects; anything longer is not one. */
const TOKEN_RESPONSE_MAX_BYTES = 64 * 1024;
/** A client assertion is used at once; Microsoft accepts up to 10 minutes. */
const ASSERTION_LIFETIME_SECONDS = 5 * 60;
/** Google's limit for a JWT bearer grant's assertion. */
const GOOGLE_ASSERTION_LIFETIME_SECONDS = 60 * 60;
/** When an answer leaves out expires_in, the token is renewed soon rather than trusted for long. */
const DEFAULT_TOKEN_LIFETIME_SECONDS = 300;

/** Statuses of an OAuth2 error answer (RFC 6749 §5.2) that mean the credentials or grant are wrong, not that the service is down. */
const REFUSAL_STATUSES = new Set([400, 401, 403]);

/**
 * The token request for `config`: Microsoft identity platform v2 client credentials (a client secret,
 * or a certificate as a signed JWT client assertion, RFC 7523 §2.2), or Google's service-account JWT
 * bearer grant (RFC 7523 §2.1) with `sub` the mailbox to act as. A fresh assertion is signed for
 * every request.
 */
export function createAccessTokenFetcher(config: OAuth2Config, deps: { clock: Clock; fetch?: typeof fetch }): FetchAccessToken {
  const fetchImpl = deps.fetch ?? fetch;
  return async () => {
    const form = await buildTokenForm(config, deps.clock.now());
    let res: Response;
    try {
      res = await fetchImpl(config.tokenUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(config.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      throw new OAuth2Error('OAUTH2_UNAVAILABLE', `token endpoint ${hostOf(config.tokenUrl)} did not answer: ${describeCause(error)}`, {
        cause: error,
      });
    }
    return parseTokenResponse(config, res, await readBoundedText(res), deps.clock.now());
  };
}

async function buildTokenForm(config: OAuth2Config, nowMs: number): Promise<URLSearchParams> {
  const now = Math.floor(nowMs / 1000);
  if (config.provider === 'google') {
    const jose = loadJose();
    const assertion = await new jose.SignJWT({ scope: config.scope })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(config.clientId)
      .setSubject(config.subject ?? '')
      .setAudience(config.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + GOOGLE_ASSERTION_LIFETIME_SECONDS)
      .sign(createPrivateKey(config.privateKeyPem ?? ''));
    return new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
  }
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: config.clientId, scope: config.scope });
  if (config.clientSecret !== undefined) {
    form.set('client_secret', config.clientSecret);
    return form;
  }
  form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  form.set('client_assertion', await signClientAssertion(config, now));
  return form;
}

/**
 * Microsoft's certificate credential: a JWT signed with the certificate's key, naming the certificate
 * by its SHA-1 (`x5t`) and SHA-256 (`x5t#S256`) thumbprints, as the identity platform requires.
 */
async function signClientAssertion(config: OAuth2Config, now: number): Promise<string> {
  const der = new X509Certificate(config.certificatePem ?? '').raw;
  const jose = loadJose();
  return new jose.SignJWT({})
    .setProtectedHeader({
      alg: 'RS256',
      typ: 'JWT',
      x5t: createHash('sha1').update(der).digest('base64url'),
      'x5t#S256': createHash('sha256').update(der).digest('base64url'),
    })
    .setIssuer(config.clientId)
    .setSubject(config.clientId)
    .setAudience(config.tokenUrl)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
    .sign(createPrivateKey(config.privateKeyPem ?? ''));
}

/** The token from a 200 answer, or the endpoint's own error (`error`, `error_description`) as an OAuth2Error. */
function parseTokenResponse(config: OAuth2Config, res: Response, text: string, nowMs: number): AccessToken {
  let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = {};
  }
  const host = hostOf(config.tokenUrl);
  if (res.ok && typeof body.access_token === 'string' && body.access_token !== '') {
    const seconds = Number(body.expires_in);
    const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TOKEN_LIFETIME_SECONDS;
    return { accessToken: body.access_token, expiresAt: nowMs + lifetime * 1000 };
  }
  // The endpoint may echo the form it was sent, client secret included: masked before it is cut short.
  const mask = createSecretMask([config.clientSecret]);
  const error = typeof body.error === 'string' ? mask(body.error).slice(0, 100) : undefined;
  const description = typeof body.error_description === 'string' ? `: ${mask(body.error_description).split(/\r?\n/)[0].slice(0, 300)}` : '';
  if (REFUSAL_STATUSES.has(res.status) && error !== undefined) {
    throw new OAuth2Error('OAUTH2_REFUSED', `token endpoint ${host} refused the credentials (${res.status} ${error}${description})`);
  }
  throw new OAuth2Error(
    'OAUTH2_UNAVAILABLE',
    `token endpoint ${host} answered ${res.status}${error ? ` ${error}${description}` : res.ok ? ' without an access_token' : ''}`,
  );
}

async function readBoundedText(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > TOKEN_RESPONSE_MAX_BYTES) break;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function describeCause(error: unknown): string {
  const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  return String(err?.cause?.code ?? err?.cause?.message ?? err?.message ?? error).slice(0, 200);
}

/** jose, loaded when a token is first requested: commands that never send do not load it. */
function loadJose(): typeof Jose {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only OAuth2 relays sign assertions
  return require('jose') as typeof Jose;
}

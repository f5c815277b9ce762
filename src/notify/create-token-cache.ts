import { systemClock, type Clock } from '../shared';
import { createAccessTokenFetcher, type AccessToken, type FetchAccessToken } from './fetch-access-token';
import type { NotifierIo } from './notifier';
import type { OAuth2Config } from './oauth2-settings';

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

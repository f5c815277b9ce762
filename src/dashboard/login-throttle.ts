/** Failed logins per address answered at once; each later one waits longer. */
export const FREE_LOGIN_FAILURES = 5;
/** The first delay, doubled for each further failure. */
export const LOGIN_DELAY_BASE_MS = 1_000;
/** The longest delay of one failed login. */
export const LOGIN_DELAY_MAX_MS = 30_000;
/** An address's failures are forgotten this long after its last one. */
export const LOGIN_FAILURE_MEMORY_MS = 15 * 60_000;
/** Addresses remembered at most; beyond it the oldest are dropped (memory stays bounded under a flood). */
const MAX_ADDRESSES = 10_000;

/**
 * Slows down failed dashboard logins per client address, without ever refusing the right token
 * A lock-out would let anyone behind the same proxy lock the admin out. The first
 * {@link FREE_LOGIN_FAILURES} failures are answered at once, then each waits 1 s, 2 s, 4 s … up to
 * 30 s. A correct token is checked first and clears the address's failures.
 */
export interface LoginThrottle {
  /** Records a failed login from `address` at `now`; returns how long to wait before answering it. */
  recordFailure(address: string, now: number): number;
  /** A successful login: the address starts afresh. */
  recordSuccess(address: string): void;
}

/** Creates the throttle; time comes from the caller's clock. */
export function createLoginThrottle(): LoginThrottle {
  const failures = new Map<string, { count: number; lastAt: number }>();
  return {
    recordFailure(address, now) {
      const previous = failures.get(address);
      const count = previous && now - previous.lastAt < LOGIN_FAILURE_MEMORY_MS ? previous.count + 1 : 1;
      // Re-inserting keeps the map ordered by last failure, so the oldest entry is the first one.
      failures.delete(address);
      failures.set(address, { count, lastAt: now });
      if (failures.size > MAX_ADDRESSES) failures.delete(failures.keys().next().value!);
      return buildLoginDelayMs(count);
    },
    recordSuccess(address) {
      failures.delete(address);
    },
  };
}

/** The wait before answering the `count`-th failed login in a row from one address. */
export function buildLoginDelayMs(count: number): number {
  if (count <= FREE_LOGIN_FAILURES) return 0;
  return Math.min(LOGIN_DELAY_MAX_MS, LOGIN_DELAY_BASE_MS * 2 ** Math.min(count - FREE_LOGIN_FAILURES - 1, 16));
}

/** Failed attempts per address answered at once; each later one waits DELAY_BASE_MS, doubled each time, up to DELAY_MAX_MS. */
const FREE_FAILURES = 5;
const DELAY_BASE_MS = 1_000;
const DELAY_MAX_MS = 30_000;
/** An address's failures are forgotten this long after its last one. */
const FAILURE_MEMORY_MS = 15 * 60_000;
/** Addresses remembered at most; beyond it the oldest are dropped (memory stays bounded under a flood). */
const MAX_ADDRESSES = 10_000;

export type AuthThrottle = ReturnType<typeof createAuthThrottle>;

/** Slows wrong admin tokens per address, never refusing the right one: a lock-out would let anyone lock the admin out. */
export function createAuthThrottle() {
  const failures = new Map<string, { count: number; lastAt: number }>();
  return {
    /** Records a wrong token from `address` at `now`; returns how long to wait before answering it. */
    recordFailure(address: string, now: number): number {
      const previous = failures.get(address);
      const count = previous && now - previous.lastAt < FAILURE_MEMORY_MS ? previous.count + 1 : 1;
      // Re-inserting keeps the map ordered by last failure, so the oldest entry is the first one.
      failures.delete(address);
      failures.set(address, { count, lastAt: now });
      if (failures.size > MAX_ADDRESSES) failures.delete(failures.keys().next().value!);
      if (count <= FREE_FAILURES) return 0;
      return Math.min(DELAY_MAX_MS, DELAY_BASE_MS * 2 ** Math.min(count - FREE_FAILURES - 1, 16));
    },
    /** The right token: the address starts afresh. */
    recordSuccess(address: string): void {
      failures.delete(address);
    },
  };
}

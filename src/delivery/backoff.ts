export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxDelayMs: number;
}

/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"):
 * the delay after attempt n is uniform in [0, min(max, base · 2^(n-1))], so a crowd of deliveries
 * that failed together does not retry together. `random` is injected for tests.
 */
export function computeBackoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 52)));
  return Math.floor(random() * exp);
}

/** The upper bound of the time from the first attempt to giving up: the sum of every cap. */
export function maxRetrySpanMs(policy: RetryPolicy): number {
  let total = 0;
  for (let n = 1; n < policy.maxAttempts; n += 1) total += Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(n - 1, 52));
  return total;
}

import type { RetryPolicy } from './backoff';

/**
 * `closed`: deliveries are claimed freely. `open`: the SMTP server is down; nothing is claimed until
 * `openUntil`. `probing`: one delivery (the oldest due) is in flight to find out whether it is back.
 */
export type BreakerState = 'closed' | 'open' | 'probing';

export interface CircuitBreaker {
  readonly state: BreakerState;
  /** When an open breaker lets the next probe through (epoch ms); 0 when closed. */
  readonly openUntil: number;
  /** Consecutive server-level failures since the breaker last closed. */
  readonly failures: number;
  /** How many deliveries may be claimed now, given `free` send slots. */
  capacity(now: number, free: number): number;
  /** The claim made with {@link capacity} took `claimed` deliveries. */
  claimed(claimed: number): void;
  /**
   * A send failed because the server as a whole is unavailable: opens (or re-opens) the breaker.
   * `notBefore`: the server asked not to be called before then (Retry-After); the pause lasts at least that long.
   */
  serverFailed(now: number, wasProbe: boolean, notBefore?: number): number;
  /** A send reached the server (sent, or refused for this message only): closes the breaker. */
  serverReached(): void;
  /**
   * The probe finished without asking the server anything (it had nothing to send, or failed before
   * sending): the server is still untested, so the next claim probes again at once. Left `probing`, the
   * breaker would claim nothing ever again.
   */
  probeEnded(now: number): void;
}

/**
 * A circuit breaker for the SMTP server (Nygard, "Release It!", ch. 5). While the server refuses
 * connections or answers 421/451, sending every queued delivery would hammer it and scatter the
 * queue over per-delivery jittered retry times. Instead the whole queue pauses with exponential
 * backoff (equal jitter: between half and all of min(max, base · 2^(n-1))) and a single probe, the
 * oldest due delivery, tests the server; when it gets through, the queue drains oldest first.
 */
export function createCircuitBreaker(policy: RetryPolicy, random: () => number = Math.random): CircuitBreaker {
  let state: BreakerState = 'closed';
  let openUntil = 0;
  let failures = 0;
  return {
    get state() {
      return state;
    },
    get openUntil() {
      return openUntil;
    },
    get failures() {
      return failures;
    },
    capacity(now, free) {
      if (state === 'closed') return free;
      if (state === 'probing' || now < openUntil) return 0;
      return Math.min(1, free);
    },
    claimed(count) {
      if (state === 'open' && count > 0) state = 'probing';
    },
    serverFailed(now, wasProbe, notBefore = 0) {
      // Sends that were already in flight when the breaker opened fail too; they do not lengthen the
      // pause, unless the server asked for a longer one.
      if (state === 'open' && !wasProbe) {
        openUntil = Math.max(openUntil, notBefore);
        return openUntil;
      }
      failures += 1;
      const cap = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(failures - 1, 52));
      openUntil = Math.max(notBefore, now + Math.ceil(cap / 2 + random() * (cap / 2)));
      state = 'open';
      return openUntil;
    },
    serverReached() {
      state = 'closed';
      openUntil = 0;
      failures = 0;
    },
    probeEnded(now) {
      if (state !== 'probing') return;
      state = 'open';
      openUntil = now;
    },
  };
}

import type { RetryPolicy } from './backoff';

/**
 * `closed`: deliveries are claimed freely. `open`: the SMTP server is down; nothing is claimed until
 * `openUntil`. `probing`: one delivery (the oldest due) is in flight to find out whether it is back.
 */
export type BreakerState = 'closed' | 'open' | 'probing';

/** Why the queue is paused: the failure that opened (or last re-opened) the breaker. */
export interface BreakerCause {
  code: string;
  message: string;
}

/** The breaker as an operator sees it (dashboard banner, /readyz, gauges). */
export interface SmtpPauseStatus {
  state: BreakerState;
  /** When the next probe may go (epoch ms); 0 when closed. */
  openUntil: number;
  /** Consecutive server-level failures since the breaker last closed. */
  failures: number;
  /** When the current pause began (epoch ms); null when closed. */
  pausedSince: number | null;
  /** The failure that opened or last re-opened it; null when closed. */
  lastError: BreakerCause | null;
}

/** The default of SMTP_PAUSE_AFTER_4XX: different deliveries answered 4xx in a row before the queue pauses. */
export const DEFAULT_PAUSE_AFTER_4XX = 3;

export interface CircuitBreaker extends Readonly<SmtpPauseStatus> {
  /** How many deliveries may be claimed now, given `free` send slots. */
  capacity(now: number, free: number): number;
  /** The claim made with {@link capacity} took `claimed` deliveries. */
  claimed(claimed: number): void;
  /** A send failed because the server as a whole is unavailable: opens (or re-opens) the breaker. */
  serverFailed(now: number, wasProbe: boolean, cause?: BreakerCause): number;
  /**
   * The server answered one delivery's mail with a 4xx (not 421): about that message, unless the
   * probe got it (the server has just been failing: the pause goes on) or `pauseAfter4xx` different
   * deliveries in a row got one with no mail accepted between them (then it is the server). Returns
   * the end of the pause when it pauses, undefined when only this delivery retries.
   */
  messageDeferred(now: number, deliveryId: number, wasProbe: boolean, cause: BreakerCause): number | undefined;
  /** A send reached the server (refused for this message only): closes the breaker. */
  serverReached(): void;
  /** The server accepted a mail: closes the breaker and forgets the 4xx answers counted so far. */
  mailAccepted(): void;
  /**
   * The probe finished without asking the server anything (it had nothing to send, or failed before
   * sending): the server is still untested, so the next claim probes again at once. Left `probing`, the
   * breaker would claim nothing ever again.
   */
  probeEnded(now: number): void;
  /** An operator asked to try now: an open breaker lets its probe through at once (the backoff is kept). True when it was open. */
  tryNow(now: number): boolean;
}

/**
 * A circuit breaker for the SMTP server (Nygard, "Release It!", ch. 5). While the server refuses
 * connections, times out or answers 421, sending every queued delivery would hammer it and scatter
 * the queue over per-delivery jittered retry times. Instead the whole queue pauses with exponential
 * backoff (equal jitter: between half and all of min(max, base · 2^(n-1))) and a single probe, the
 * oldest due delivery, tests the server; when it gets through, the queue drains oldest first. A 4xx
 * for one message (451 greylisting, 450 mailbox busy) is that message's own retry, so one message
 * never holds the others (issue 17); only `pauseAfter4xx` different deliveries deferred in a row say
 * the server itself is in trouble.
 */
export function createCircuitBreaker(
  policy: RetryPolicy,
  random: () => number = Math.random,
  pauseAfter4xx: number = DEFAULT_PAUSE_AFTER_4XX,
): CircuitBreaker {
  let state: BreakerState = 'closed';
  let openUntil = 0;
  let failures = 0;
  let pausedSince: number | null = null;
  let lastError: BreakerCause | null = null;
  /** Deliveries answered 4xx since the last accepted mail (each counted once, however often it retried). */
  const deferred = new Set<number>();
  const close = () => {
    state = 'closed';
    openUntil = 0;
    failures = 0;
    pausedSince = null;
    lastError = null;
  };
  const open = (now: number, wasProbe: boolean, cause?: BreakerCause): number => {
    // Sends that were already in flight when the breaker opened fail too; they do not lengthen the pause.
    if (state === 'open' && !wasProbe) return openUntil;
    failures += 1;
    const cap = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(failures - 1, 52));
    openUntil = now + Math.ceil(cap / 2 + random() * (cap / 2));
    pausedSince ??= now;
    if (cause) lastError = { code: cause.code, message: cause.message.slice(0, 300) };
    state = 'open';
    return openUntil;
  };
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
    get pausedSince() {
      return pausedSince;
    },
    get lastError() {
      return lastError;
    },
    capacity(now, free) {
      if (state === 'closed') return free;
      if (state === 'probing' || now < openUntil) return 0;
      return Math.min(1, free);
    },
    claimed(count) {
      if (state === 'open' && count > 0) state = 'probing';
    },
    serverFailed: open,
    messageDeferred(now, deliveryId, wasProbe, cause) {
      if (wasProbe) return open(now, true, cause);
      if (state !== 'closed') return undefined;
      deferred.add(deliveryId);
      if (deferred.size < pauseAfter4xx) return undefined;
      deferred.clear();
      return open(now, false, { ...cause, message: `${pauseAfter4xx} different deliveries in a row answered 4xx; last: ${cause.message}` });
    },
    serverReached: close,
    mailAccepted() {
      close();
      deferred.clear();
    },
    probeEnded(now) {
      if (state !== 'probing') return;
      state = 'open';
      openUntil = now;
    },
    tryNow(now) {
      if (state !== 'open') return false;
      openUntil = Math.min(openUntil, now);
      return true;
    },
  };
}

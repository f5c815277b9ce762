import { PAUSE_AFTER_4XX_IN_A_ROW, type Config } from '../config';
import type { FailureClass } from '../notify';

export type RetrySettings = Config['retry'];

/** A held queue probes at most once per this many base delays: each probe may be a refused login, and lockouts must not trip. */
const HELD_PROBE_EVERY_BASES = 5;

/** Spread added to a server's asked-for time, so relays told the same time do not all return at once. */
const THROTTLE_JITTER_MS = 1_000;

/**
 * The pause as an operator sees it. `open`: nothing claimed until `openUntil`; `probing`: the oldest due delivery tests
 * the server. `held`: only an operator can fix `lastError` (`configProblem`), so nothing is given up meanwhile.
 */
export interface QueuePauseStatus {
  state: 'closed' | 'open' | 'probing';
  openUntil: number;
  failures: number;
  pausedSince: number | null;
  lastError: { code: string; message: string } | null;
  held: boolean;
}

const CLOSED: QueuePauseStatus = { state: 'closed', openUntil: 0, failures: 0, pausedSince: null, lastError: null, held: false };

/** What one send came to (`isProbe`: the delivery sent to test a paused server), or `not-built`: the server was not asked. */
export type AttemptOutcome =
  | { kind: 'sent' }
  | { kind: 'failed'; failure: FailureClass; deliveryId: number; isProbe: boolean }
  | { kind: 'not-built'; failure: FailureClass };

/**
 * A delivery's next state. `backoff`: retried alone at `at`; `pause`: the server failed (or asked to wait), the queue
 * waits until `until`, then probes; `held`: an operator must act, nothing is given up; `dead`: nothing can succeed.
 */
export type NextState =
  | { next: 'sent' }
  | { next: 'backoff'; at: number }
  | { next: 'pause'; until: number }
  | { next: 'held'; until: number }
  | { next: 'dead' };

function capMs(settings: RetrySettings, n: number): number {
  return Math.min(settings.maxDelayMs, settings.baseMs * 2 ** Math.max(0, Math.min(n - 1, 52)));
}

/** Exponential backoff with full jitter (AWS Architecture Blog): deliveries that failed together do not retry together. */
export function computeBackoffMs(attempt: number, settings: RetrySettings, random: () => number = Math.random): number {
  return Math.floor(random() * capMs(settings, attempt));
}

/** The one place that decides what happens after an attempt, and holds the server's pause. */
export type RetryDecider = Readonly<ReturnType<typeof createRetryDecider>>;

interface PauseState extends QueuePauseStatus {
  /** Deliveries answered 4xx since the last accepted mail (each counted once, however often it retried). */
  deferred: Set<number>;
  settings: RetrySettings;
  random: () => number;
}

/**
 * The retry policy (a circuit breaker): a delivery failing for itself retries alone with backoff; a server down pauses
 * the queue (backoff, equal jitter) until one probe, the oldest due delivery, succeeds, keeping order. A 4xx is one
 * message's retry; {@link PAUSE_AFTER_4XX_IN_A_ROW} different deliveries deferred in a row pause the queue.
 */
export function createRetryDecider(settings: RetrySettings, random: () => number = Math.random) {
  const pause: PauseState = { ...CLOSED, deferred: new Set(), settings, random };
  return Object.assign(pause, {
    /** The next state of a delivery whose attempt number `attempts` came to `outcome` at `now`; a failed send also moves the pause. */
    decide: (outcome: AttemptOutcome, attempts: number, now: number): NextState => decideNext(pause, outcome, attempts, now),
    /** How many deliveries may be claimed now, given `free` send slots: all, one probe, or none while paused. */
    capacity(now: number, free: number): number {
      if (pause.state === 'closed') return free;
      if (pause.state === 'probing' || now < pause.openUntil) return 0;
      return Math.min(1, free);
    },
    /** The claim made with `capacity` took `count` deliveries (the first is the probe when paused). */
    claimed(count: number): void {
      if (pause.state === 'open' && count > 0) pause.state = 'probing';
    },
    /** The probe finished without asking the server anything: the next claim probes again at once. */
    probeEnded(now: number): void {
      if (pause.state !== 'probing') return;
      pause.state = 'open';
      pause.openUntil = now;
    },
    /** An operator asked to try now: a paused queue lets its probe through at once. True when it was paused. */
    tryNow(now: number): boolean {
      if (pause.state !== 'open') return false;
      pause.openUntil = Math.min(pause.openUntil, now);
      return true;
    },
  });
}

function decideNext(pause: PauseState, outcome: AttemptOutcome, attempts: number, now: number): NextState {
  if (outcome.kind === 'sent') {
    Object.assign(pause, CLOSED);
    pause.deferred.clear();
    return { next: 'sent' };
  }
  const { failure } = outcome;
  const pausedUntil = outcome.kind === 'failed' ? movePause(pause, outcome, now) : undefined;
  // Only an operator can fix it (a password, a certificate, a template), maybe days later: nothing is given up.
  const held = failure.configProblem;
  if (held && pausedUntil !== undefined) {
    pause.openUntil = Math.max(pausedUntil, now + HELD_PROBE_EVERY_BASES * pause.settings.baseMs);
    return { next: 'held', until: pause.openUntil };
  }
  if (held) return { next: 'backoff', at: now + computeBackoffMs(attempts, pause.settings, pause.random) };
  if (failure.kind === 'permanent') return { next: 'dead' };
  // A throttle is the server's pace, not this mail's failure: it uses up no delivery's last attempt.
  if (pausedUntil !== undefined && failure.retryAfterMs !== undefined) return { next: 'pause', until: pausedUntil };
  if (attempts >= pause.settings.maxAttempts) return { next: 'dead' };
  if (pausedUntil !== undefined) return { next: 'pause', until: pausedUntil };
  return { next: 'backoff', at: now + computeBackoffMs(attempts, pause.settings, pause.random) };
}

/** Moves the pause after a failed send; returns its end when the queue is (now) paused for this failure. */
function movePause(pause: PauseState, outcome: Extract<AttemptOutcome, { kind: 'failed' }>, now: number): number | undefined {
  const { failure, isProbe, deliveryId } = outcome;
  if (failure.scope === 'server') {
    // A server that said when to come back is throttling, not down: tried again then (bounded like any delay).
    const toldUntil =
      failure.retryAfterMs === undefined
        ? undefined
        : now + Math.min(failure.retryAfterMs, pause.settings.maxDelayMs) + Math.floor(pause.random() * THROTTLE_JITTER_MS);
    return openPause(pause, now, isProbe, failure, toldUntil);
  }
  if (failure.code !== 'SMTP_4XX') {
    // The server answered about this message: it is reachable.
    Object.assign(pause, CLOSED);
    return undefined;
  }
  if (isProbe) return openPause(pause, now, true, failure);
  if (pause.state !== 'closed') return undefined;
  pause.deferred.add(deliveryId);
  if (pause.deferred.size < PAUSE_AFTER_4XX_IN_A_ROW) return undefined;
  pause.deferred.clear();
  const message = `${PAUSE_AFTER_4XX_IN_A_ROW} different deliveries in a row answered 4xx; last: ${failure.message}`;
  return openPause(pause, now, false, { ...failure, message });
}

function openPause(
  pause: PauseState,
  now: number,
  wasProbe: boolean,
  /** What opened it; its code's `configProblem`: only an operator can fix it. */
  cause: FailureClass,
  toldUntil?: number,
): number {
  // Sends in flight when the pause began fail too; they lengthen it only when the server asked for longer.
  if (pause.state === 'open' && !wasProbe) {
    pause.openUntil = Math.max(pause.openUntil, toldUntil ?? 0);
    return pause.openUntil;
  }
  // Only an outage grows the backoff: a server that said when is taken at its word.
  if (toldUntil === undefined) pause.failures += 1;
  // Exponential backoff with equal jitter for the `failures`-th pause in a row: between half the cap and the cap.
  const cap = capMs(pause.settings, pause.failures);
  pause.openUntil = toldUntil ?? now + Math.ceil(cap / 2 + pause.random() * (cap / 2));
  pause.pausedSince ??= now;
  pause.lastError = { code: cause.code, message: cause.message.slice(0, 300) };
  pause.held = cause.configProblem;
  pause.state = 'open';
  return pause.openUntil;
}

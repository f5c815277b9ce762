import { randomUUID } from 'node:crypto';
import type { Clock, Logger } from '../shared';
import type { MailTransport } from '../mail';
import type { ClaimedDelivery, Store } from '../store';
import { computeBackoffMs, type RetryPolicy } from './backoff';
import { createCircuitBreaker, type BreakerState } from './circuit-breaker';
import { classifyFailure, type FailureClass } from './classify-failure';
import type { MailComposer } from './compose-mail';

export interface WorkerOptions {
  store: Store;
  transport: MailTransport;
  compose: MailComposer;
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  /** Sends in flight at once (the SMTP pool size). */
  concurrency: number;
  /** How often the queue is looked at when nothing wakes the worker. */
  pollMs: number;
  /** How long a claim lasts; a claim not finished by then (its process died) is taken again. */
  leaseMs: number;
  /** This process's name on its leases. */
  owner?: string;
  random?: () => number;
  /** Called after every outcome, for metrics and tests. */
  onOutcome?: (event: WorkerOutcome) => void;
}

export type WorkerOutcome =
  | { type: 'sent'; delivery: ClaimedDelivery; messageId: string; response: string; durationMs: number }
  | { type: 'retry'; delivery: ClaimedDelivery; failure: FailureClass; nextAttemptAt: number; durationMs: number }
  | { type: 'dead'; delivery: ClaimedDelivery; failure: FailureClass; durationMs: number };

export interface Worker {
  start(): void;
  /** Looks at the queue now (after an ingest). */
  kick(): void;
  /** Stops claiming; waits up to `timeoutMs` for sends in flight. Resolves true when none is left. */
  stop(timeoutMs: number): Promise<boolean>;
  readonly inFlight: number;
  /** The SMTP circuit breaker: `open` while the server is down and the queue is paused. */
  readonly breaker: { state: BreakerState; openUntil: number; failures: number };
}

/**
 * The delivery loop: claim due deliveries (oldest first), compose, send, and record the outcome.
 * The claim is durable before the send and the outcome after it, so a crash between the two sends
 * that mail again after restart: at least once, with duplicates bounded by the sends in flight.
 */
export function createWorker(options: WorkerOptions): Worker {
  const owner = options.owner ?? `relay-${process.pid}-${randomUUID().slice(0, 8)}`;
  const random = options.random ?? Math.random;
  const log = options.logger;
  let running = false;
  let stopping = false;
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;
  let again = false;
  const idleWaiters: (() => void)[] = [];
  const breaker = createCircuitBreaker(options.retry, random);
  let probeId: number | undefined;

  const schedule = (delayMs: number) => {
    if (!running || stopping) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void tick(), Math.max(0, delayMs));
    timer.unref?.();
  };

  async function tick(): Promise<void> {
    if (!running || stopping) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      do {
        again = false;
        const capacity = breaker.capacity(options.clock.now(), options.concurrency - inFlight);
        if (capacity <= 0) break;
        let claimed: ClaimedDelivery[];
        try {
          claimed = await options.store.claimDue({ now: options.clock.now(), limit: capacity, owner, leaseMs: options.leaseMs });
        } catch (error) {
          log.error({ err: error }, 'cannot claim deliveries from the outbox; will try again');
          break;
        }
        breaker.claimed(claimed.length);
        if (breaker.state === 'probing' && claimed.length > 0) probeId = claimed[0]!.id;
        for (const delivery of claimed) {
          inFlight += 1;
          void processDelivery(delivery).finally(() => {
            inFlight -= 1;
            if (inFlight === 0) idleWaiters.splice(0).forEach((resolve) => resolve());
            void tick();
          });
        }
        if (claimed.length === capacity) again = true;
      } while (again && !stopping);
    } finally {
      ticking = false;
    }
    await scheduleNext();
  }

  async function scheduleNext(): Promise<void> {
    if (!running || stopping) return;
    const now = options.clock.now();
    // No free slot (or a probe in flight): the next finished send ticks; polling now would spin.
    if (breaker.capacity(Math.max(now, breaker.openUntil), options.concurrency - inFlight) <= 0) return;
    if (breaker.state === 'open' && breaker.openUntil > now) {
      schedule(breaker.openUntil - now);
      return;
    }
    let delay = options.pollMs;
    try {
      const due = await options.store.nextDueAt();
      if (due !== null) delay = Math.min(delay, Math.max(0, due - options.clock.now()));
    } catch {
      // The poll interval still applies; the claim will report the storage problem.
    }
    schedule(delay);
  }

  async function processDelivery(delivery: ClaimedDelivery): Promise<void> {
    const started = options.clock.now();
    const dlog = log.child({ deliveryId: delivery.id, reportId: delivery.reportId, attempt: delivery.attempts });
    try {
      let message;
      try {
        message = await options.compose(delivery, dlog);
        dlog.debug({ subject: message.subject }, 'mail rendered');
      } catch (error) {
        // Rendering is deterministic: the same input fails the same way, so no retry.
        const failure = { ...classifyFailure(error), kind: 'permanent' as const };
        if (failure.code === 'UNKNOWN') failure.code = 'RENDER';
        await finishDead(delivery, failure, started, dlog);
        return;
      }
      const wasProbe = probeId === delivery.id;
      if (wasProbe) probeId = undefined;
      try {
        const result = await options.transport.send(message);
        breaker.serverReached();
        if (wasProbe) log.info('the SMTP server answers again: resuming deliveries, oldest first');
        const now = options.clock.now();
        await options.store.markSent(delivery.id, { now, messageId: String(message.messageId ?? result.messageId) });
        dlog.info({ messageId: message.messageId, response: result.response, ...(result.path ? { path: result.path } : {}) }, result.path ? `mail written to ${result.path}` : 'mail sent');
        options.onOutcome?.({ type: 'sent', delivery, messageId: String(message.messageId), response: result.response, durationMs: now - started });
      } catch (error) {
        const failure = classifyFailure(error);
        const now = options.clock.now();
        let pausedUntil: number | undefined;
        if (failure.scope === 'server') {
          const wasOpen = breaker.state !== 'closed' && !wasProbe;
          pausedUntil = breaker.serverFailed(now, wasProbe);
          if (!wasOpen) log.warn({ code: failure.code, error: failure.message, pausedUntil: new Date(pausedUntil).toISOString(), failures: breaker.failures }, 'the SMTP server is unavailable: pausing all deliveries, then probing with the oldest');
        } else {
          breaker.serverReached();
        }
        if (failure.kind === 'transient' && delivery.attempts < options.retry.maxAttempts) {
          // A server-wide failure puts the delivery back at the pause's end, not at a jittered time of its
          // own, so that the queue keeps its order: the claim takes due deliveries oldest first.
          const nextAttemptAt = pausedUntil ?? now + computeBackoffMs(delivery.attempts, options.retry, random);
          await options.store.markRetry(delivery.id, { now, nextAttemptAt, error: failure.message, code: failure.code });
          const fields = { code: failure.code, error: failure.message, nextAttemptAt: new Date(nextAttemptAt).toISOString() };
          if (failure.configProblem) dlog.error(fields, 'send failed: configuration problem (will retry)');
          else dlog.warn(fields, 'send failed; will retry');
          options.onOutcome?.({ type: 'retry', delivery, failure, nextAttemptAt, durationMs: now - started });
        } else {
          if (failure.kind === 'transient') failure.message = `gave up after ${delivery.attempts} attempts: ${failure.message}`;
          await finishDead(delivery, failure, started, dlog);
        }
      }
    } catch (error) {
      // The outcome could not be recorded: the lease expires and the delivery is tried again.
      dlog.error({ err: error }, 'cannot record the outcome of a send; the delivery will be tried again when its lease expires');
    }
  }

  async function finishDead(delivery: ClaimedDelivery, failure: FailureClass, started: number, dlog: Logger): Promise<void> {
    const now = options.clock.now();
    await options.store.markDead(delivery.id, { now, error: failure.message, code: failure.code });
    const fields = { code: failure.code, error: failure.message };
    if (failure.configProblem) dlog.fatal(fields, 'delivery is dead: CONFIGURATION PROBLEM, fix it and retry the dead deliveries');
    else dlog.error(fields, 'delivery is dead: the failure is permanent');
    options.onOutcome?.({ type: 'dead', delivery, failure, durationMs: now - started });
  }

  return {
    get inFlight() {
      return inFlight;
    },
    get breaker() {
      return { state: breaker.state, openUntil: breaker.openUntil, failures: breaker.failures };
    },
    start() {
      if (running) return;
      running = true;
      stopping = false;
      void tick();
    },
    kick() {
      if (!running || stopping) return;
      setImmediate(() => void tick());
    },
    async stop(timeoutMs) {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (inFlight === 0) {
        running = false;
        return true;
      }
      const idle = new Promise<boolean>((resolve) => idleWaiters.push(() => resolve(true)));
      const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref?.());
      const result = await Promise.race([idle, timeout]);
      running = false;
      return result;
    },
  };
}

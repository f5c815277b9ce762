import { randomUUID } from 'node:crypto';
import type { Clock, Logger } from '../shared';
import type { Notifier } from '../notify';
import type { ClaimedDelivery, Store } from '../store';
import { claimDeliveries, computeClaimCapacity } from './claim-deliveries';
import type { DeliveryContext, RouteSentEvent, WorkerOutcome } from './delivery-context';
import type { OutcomeLedger } from './outcome-ledger';
import { createLeaseKeeper } from './keep-leases';
import { createProbeSlot } from './probe-slot';
import type { DeliveryComposer } from '../compose';
import type { RoutePlanner } from './route-planner';
import { createRetryDecider, type RetrySettings, type SmtpPauseStatus } from './retry-policy';
import { runDelivery } from './run-delivery';
import { createSendGate, type SendGate } from './send-gate';
import { createStepPacer } from './step-pacer';

export interface WorkerOptions {
  store: Store;
  transport: Notifier;
  compose: DeliveryComposer;
  /** Decides what each route does with a delivery; evaluated once per delivery and recorded. */
  planRoutes: RoutePlanner;
  clock: Clock;
  logger: Logger;
  retry: RetrySettings;
  /** Sends in flight at once (the SMTP pool size). */
  concurrency: number;
  /**
   * Deliveries claimed and prepared (composed, routes decided) at once, at least `concurrency`
   * (the default). More than the pool keeps the SMTP connections busy while the next mails are
   * rendered and recorded; sends still start in queue order, `concurrency` at a time (send-gate.ts).
   */
  prepareAhead?: number;
  /** How often the queue is looked at when nothing wakes the worker. */
  pollMs: number;
  /** How long a claim lasts; a claim not finished by then (its process died) is taken again. */
  leaseMs: number;
  /** This process's name on its leases. */
  owner?: string;
  random?: () => number;
  /**
   * Where outcomes are recorded: at once, or kept and retried while the store refuses them (the
   * delivery's lease kept alive), so a mail sent is never sent again because its record failed.
   */
  ledger: OutcomeLedger;
  /** Called after every outcome, for metrics and tests. */
  onOutcome?: (event: WorkerOutcome) => void;
  /** Called after each route's mail was accepted and recorded (the copy of the sent mail is kept then). */
  onRouteSent?: (event: RouteSentEvent) => void;
  /** SMTP_PAUSE_AFTER_4XX: different deliveries answered 4xx in a row before the whole queue pauses. */
  pauseAfter4xx?: number;
  /** True while webhooks wait for their answer: the worker's heavy steps are spaced out meanwhile (step-pacer.ts). */
  acksWaiting?: () => boolean;
}

/** What {@link Worker.tryNow} did. */
export type TryNowResult =
  /** The queue was paused: the probe (the oldest due delivery) goes now instead of at the end of the pause. */
  | 'probing-now'
  /** A probe is already in flight: its answer decides. */
  | 'probe-in-flight'
  /** Nothing was paused: the queue was only looked at again. */
  | 'not-paused';

export interface Worker {
  start(): void;
  /** Looks at the queue now (after an ingest). */
  kick(): void;
  /** Stops claiming; waits up to `timeoutMs` for sends in flight. Resolves true when none is left. */
  stop(timeoutMs: number): Promise<boolean>;
  readonly inFlight: number;
  /** The queue's pause (retry-policy.ts): `open` while the server is down and the queue is paused. */
  readonly breaker: SmtpPauseStatus;
  /**
   * An operator's "try now": a paused queue probes the SMTP server at once (the dashboard's button),
   * and the deliveries waiting for the pause's end become due now (the oldest is the probe).
   */
  tryNow(): Promise<TryNowResult>;
}

/** The loop's own state: whether it runs, one tick at a time (a tick asked for meanwhile runs after), one timer. */
interface LoopState {
  running: boolean;
  stopping: boolean;
  ticking: boolean;
  /** Another claim round is due before the tick ends (a full claim, or a tick asked for meanwhile). */
  again: boolean;
  /** A kick is already queued for this turn of the event loop. */
  kickPending: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Deliveries between their claim and their settle, and who waits for none to be left (stop). */
interface InFlight {
  count: number;
  /** Their ids: a claim that returns one of them again (its lease ran out) must not start it twice. */
  ids: Set<number>;
  idleWaiters: (() => void)[];
}

interface WorkerLoop {
  readonly context: DeliveryContext;
  readonly gate: SendGate;
  /** Deliveries claimed and not yet settled, at most (prepare-ahead included). */
  readonly maxInFlight: number;
  /** The fewest deliveries worth a claim while `inFlight` run (see {@link computeMinClaim}). */
  readonly minClaim: (inFlight: number) => number;
  readonly pollMs: number;
  readonly state: LoopState;
  readonly inFlight: InFlight;
}

/**
 * The delivery loop: claim due deliveries (oldest first), compose, send, and settle the outcome
 * (claim-deliveries.ts, run-delivery.ts). The claim is durable before the send and the outcome
 * after it, so a crash between the two sends that mail again after restart: at least once, with
 * duplicates bounded by the sends in flight. An outcome the store refuses is kept by the ledger
 * (outcome-ledger.ts) until it lands, so a failed write alone never repeats a mail.
 */
export function createWorker(options: WorkerOptions): Worker {
  const random = options.random ?? Math.random;
  const context: DeliveryContext = {
    store: options.store,
    transport: options.transport,
    compose: options.compose,
    planRoutes: options.planRoutes,
    clock: options.clock,
    logger: options.logger,
    leaseMs: options.leaseMs,
    owner: options.owner ?? `relay-${process.pid}-${randomUUID().slice(0, 8)}`,
    ledger: options.ledger,
    policy: createRetryDecider(options.retry, random, options.pauseAfter4xx),
    probe: createProbeSlot(),
    pacer: createStepPacer({ acksWaiting: options.acksWaiting }),
    onOutcome: options.onOutcome,
    onRouteSent: options.onRouteSent,
  };
  const maxInFlight = Math.max(options.concurrency, options.prepareAhead ?? options.concurrency);
  const loop: WorkerLoop = {
    context,
    gate: createSendGate(options.concurrency),
    maxInFlight,
    minClaim: computeMinClaim(options.concurrency, maxInFlight),
    pollMs: options.pollMs,
    state: { running: false, stopping: false, ticking: false, again: false, kickPending: false, timer: undefined },
    inFlight: { count: 0, ids: new Set(), idleWaiters: [] },
  };
  const leases = createLeaseKeeper({
    store: options.store,
    owner: context.owner,
    leaseMs: options.leaseMs,
    clock: options.clock,
    logger: options.logger,
    inFlight: () => [...loop.inFlight.ids],
  });
  const { policy } = context;
  return {
    get inFlight() {
      return loop.inFlight.count;
    },
    get breaker() {
      const { state, openUntil, failures, pausedSince, lastError } = policy;
      return { state, openUntil, failures, pausedSince, lastError };
    },
    tryNow: () => tryNow(loop),
    start() {
      if (loop.state.running) return;
      loop.state.running = true;
      loop.state.stopping = false;
      leases.start();
      void tick(loop);
    },
    kick: () => kick(loop),
    stop: async (timeoutMs) => {
      const drained = await stopLoop(loop, timeoutMs);
      leases.stop();
      return drained;
    },
  };
}

/**
 * Claims while there is room and deliveries are due, starts each one, then schedules the next look.
 * A tick of the poll timer claims whatever room there is: the batch rule (computeMinClaim) only
 * makes a settled delivery's tick wait for its neighbours, never the queue wait for long.
 */
async function tick(loop: WorkerLoop, fromTimer = false): Promise<void> {
  const { state } = loop;
  if (!state.running || state.stopping) return;
  if (state.ticking) {
    state.again = true;
    return;
  }
  state.ticking = true;
  try {
    do {
      state.again = false;
      const capacity = computeClaimCapacity(loop.context, loop.maxInFlight - loop.inFlight.count, loop.inFlight.count);
      if (capacity <= 0 || (!fromTimer && capacity < loop.minClaim(loop.inFlight.count))) break;
      const claim = await claimDeliveries(loop.context, capacity, loop.inFlight.ids);
      if (!claim) break;
      for (const delivery of claim.deliveries) launchDelivery(loop, delivery);
      if (claim.full) state.again = true;
    } while (state.again && !state.stopping);
  } finally {
    state.ticking = false;
  }
  await scheduleNext(loop);
}

/**
 * Claims in batches: with more deliveries prepared ahead than the pool sends at once, a
 * claim waits until a pool's worth of slots is free, as long as at least a pool's worth is still in
 * flight (the SMTP connections stay busy meanwhile, and each settled delivery ticks again). One
 * claim statement then takes several rows instead of one per settled delivery. Without prepare-ahead,
 * or with fewer in flight than the pool, every free slot is claimed at once, as before.
 */
function computeMinClaim(concurrency: number, maxInFlight: number): (inFlight: number) => number {
  const batch = Math.min(concurrency, maxInFlight - concurrency);
  return (inFlight) => (batch > 1 && inFlight >= concurrency ? batch : 1);
}

/** Runs one claimed delivery in the background; its end frees a slot and looks at the queue again. */
function launchDelivery(loop: WorkerLoop, delivery: ClaimedDelivery): void {
  loop.inFlight.count += 1;
  loop.inFlight.ids.add(delivery.id);
  // Tickets in claim order (claims come oldest first): the order sends may start in.
  const ticket = loop.gate.ticket();
  void runDelivery(loop.context, delivery, ticket).finally(() => {
    ticket.cancel();
    loop.inFlight.count -= 1;
    loop.inFlight.ids.delete(delivery.id);
    if (loop.inFlight.count === 0) loop.inFlight.idleWaiters.splice(0).forEach((resolve) => resolve());
    void tick(loop);
  });
}

/** Sets the timer for the next tick: at the breaker's end of pause, the next due delivery, or the poll interval. */
async function scheduleNext(loop: WorkerLoop): Promise<void> {
  const { context, state } = loop;
  if (!state.running || state.stopping) return;
  // At the cap: the ledger wakes the worker (kick) once outcomes are recorded again.
  if (context.ledger.full) return;
  const now = context.clock.now();
  // No free slot, a probe in flight, or an outage whose deliveries are still settling: the next finished
  // send ticks; polling now would spin.
  if (context.policy.state !== 'closed' && loop.inFlight.count > 0) return;
  if (context.policy.capacity(Math.max(now, context.policy.openUntil), loop.maxInFlight - loop.inFlight.count) <= 0) return;
  // Fewer free slots than a batch (computeMinClaim): the deliveries in flight tick as they settle (a timer
  // due now would only find the same and spin); should they not settle soon (the store away, say), the
  // poll claims the free slots anyway.
  if (loop.maxInFlight - loop.inFlight.count < loop.minClaim(loop.inFlight.count)) {
    armTimer(loop, loop.pollMs);
    return;
  }
  if (context.policy.state === 'open' && context.policy.openUntil > now) {
    armTimer(loop, context.policy.openUntil - now);
    return;
  }
  let delay = loop.pollMs;
  try {
    const due = await context.store.nextDueAt();
    if (due !== null) delay = Math.min(delay, Math.max(0, due - context.clock.now()));
  } catch {
    // The poll interval still applies; the claim will report the storage problem.
  }
  armTimer(loop, delay);
}

function armTimer(loop: WorkerLoop, delayMs: number): void {
  const { state } = loop;
  if (!state.running || state.stopping) return;
  if (state.timer) clearTimeout(state.timer);
  state.timer = setTimeout(() => void tick(loop, true), Math.max(0, delayMs));
  state.timer.unref?.();
}

/** "Try now": an open breaker's probe goes at once, with the deliveries that waited for the pause made due now. */
async function tryNow(loop: WorkerLoop): Promise<TryNowResult> {
  const { policy, clock, logger, store } = loop.context;
  if (policy.state === 'probing') return 'probe-in-flight';
  if (policy.state === 'closed') {
    kick(loop);
    return 'not-paused';
  }
  const now = clock.now();
  const until = policy.openUntil;
  policy.tryNow(now);
  try {
    const expedited = await store.expediteRetries({ now, until });
    logger.info({ expedited }, 'an operator asked to try SMTP now: probing with the oldest due delivery');
  } catch (error) {
    // The probe still goes, with whatever is due; the store's trouble is reported by the claim too.
    logger.warn({ err: error }, 'try now: cannot make the waiting deliveries due now');
  }
  kick(loop);
  return 'probing-now';
}

/** Looks at the queue soon; a burst of webhooks in one turn wakes the worker once, not once each. */
function kick(loop: WorkerLoop): void {
  const { state } = loop;
  if (!state.running || state.stopping || state.kickPending) return;
  state.kickPending = true;
  setImmediate(() => {
    state.kickPending = false;
    void tick(loop);
  });
}

/** Stops claiming; waits up to `timeoutMs` for deliveries in flight. True when none is left. */
async function stopLoop(loop: WorkerLoop, timeoutMs: number): Promise<boolean> {
  const { state, inFlight } = loop;
  state.stopping = true;
  if (state.timer) clearTimeout(state.timer);
  if (inFlight.count === 0) {
    state.running = false;
    return true;
  }
  const idle = new Promise<boolean>((resolve) => inFlight.idleWaiters.push(() => resolve(true)));
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref?.());
  const result = await Promise.race([idle, timeout]);
  state.running = false;
  return result;
}

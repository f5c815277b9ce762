import { randomUUID } from 'node:crypto';
import type { SendMailOptions } from 'nodemailer';
import type { Clock, Logger } from '../shared';
import type { MailTransport } from '../mail';
import type { ClaimedDelivery, RouteMailRecord, Store } from '../store';
import { computeBackoffMs, type RetryPolicy } from './backoff';
import { createSendGate, type SendTicket } from './send-gate';
import { createCircuitBreaker, type BreakerState } from './circuit-breaker';
import { classifyFailure, type FailureClass } from './classify-failure';
import type { ComposedMail, MailComposer } from './compose-mail';
import type { RoutePlanner } from './route-planner';
import type { OutcomeLedger, OutcomeWrite } from './outcome-ledger';

export interface WorkerOptions {
  store: Store;
  transport: MailTransport;
  compose: MailComposer;
  /** Decides what each route does with a delivery; evaluated once per delivery and recorded. */
  planRoutes: RoutePlanner;
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
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
}

export type WorkerOutcome =
  /** Every route mail of the delivery is sent (`routes`: those sent in this attempt, in order; `response`: the first one's SMTP answer). */
  | { type: 'sent'; delivery: ClaimedDelivery; messageId: string; response: string; durationMs: number; routes: string[] }
  /** No route mailed it: each matching route's notify policy held it back, or none matched. */
  | { type: 'suppressed'; delivery: ClaimedDelivery; reasons: Record<string, string>; durationMs: number }
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
 * that mail again after restart: at least once, with duplicates bounded by the sends in flight. An
 * outcome the store refuses is kept by the ledger (outcome-ledger.ts) until it lands, so a failed
 * write alone never repeats a mail.
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
  let kickPending = false;
  const idleWaiters: (() => void)[] = [];
  const breaker = createCircuitBreaker(options.retry, random);
  const maxInFlight = Math.max(options.concurrency, options.prepareAhead ?? options.concurrency);
  const gate = createSendGate(options.concurrency);
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
        // At the cap of unrecorded outcomes no new work is claimed: a mail sent now could not be recorded either.
        const capacity = options.ledger.full ? 0 : breaker.capacity(options.clock.now(), maxInFlight - inFlight);
        if (capacity <= 0) break;
        let claimed: ClaimedDelivery[];
        try {
          claimed = await options.store.claimDue({ now: options.clock.now(), limit: capacity, owner, leaseMs: options.leaseMs });
        } catch (error) {
          log.error({ err: error }, 'cannot claim deliveries from the outbox; will try again');
          break;
        }
        const fresh = claimed.filter((d) => !options.ledger.holds(d.id));
        // Claimed again after its lease ran out while its outcome waits (the store was away too long to
        // extend it): it was sent; the held outcome settles it.
        if (fresh.length < claimed.length) log.warn({ deliveryIds: claimed.filter((d) => options.ledger.holds(d.id)).map((d) => d.id) }, 'not sending again: the outcome of these deliveries is held until the store records it');
        breaker.claimed(fresh.length);
        if (breaker.state === 'probing' && fresh.length > 0) probeId = fresh[0]!.id;
        for (const delivery of fresh) {
          inFlight += 1;
          // Tickets in claim order (claims come oldest first): the order sends may start in.
          const ticket = gate.ticket();
          void processDelivery(delivery, ticket).finally(() => {
            ticket.cancel();
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
    // At the cap: the ledger wakes the worker (kick) once outcomes are recorded again.
    if (options.ledger.full) return;
    const now = options.clock.now();
    // No free slot (or a probe in flight): the next finished send ticks; polling now would spin.
    if (breaker.capacity(Math.max(now, breaker.openUntil), maxInFlight - inFlight) <= 0) return;
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

  async function processDelivery(delivery: ClaimedDelivery, ticket: SendTicket): Promise<void> {
    const started = options.clock.now();
    const dlog = log.child({ deliveryId: delivery.id, reportId: delivery.reportId, attempt: delivery.attempts });
    try {
      let composed: ComposedMail;
      try {
        composed = await options.compose(delivery, dlog);
      } catch (error) {
        // Rendering is deterministic: the same input fails the same way, so no retry.
        await finishDead(delivery, renderFailure(error), started, dlog);
        return;
      }
      const wasProbe = probeId === delivery.id;
      if (wasProbe) probeId = undefined;
      const plan = await loadPlan(delivery, composed, dlog);
      await sendPending(delivery, composed, plan, started, dlog, wasProbe, ticket);
    } catch (error) {
      // Only the steps before any send can throw (outcomes go to the ledger, which keeps them): nothing
      // was mailed, the lease expires and the delivery is tried again.
      dlog.error({ err: error }, 'cannot prepare the delivery (nothing was sent); it will be tried again when its lease expires');
    }
  }

  /** Records an outcome through the ledger: at once, or kept (and the lease kept alive) until the store takes it. */
  function record(delivery: ClaimedDelivery, write: OutcomeWrite): Promise<'recorded' | 'held'> {
    return options.ledger.record({ deliveryId: delivery.id, reportId: delivery.reportId, owner }, write);
  }

  /**
   * The routing decisions of the delivery: taken at its first attempt and recorded, so a retry, a
   * restart or another replica sends exactly the routes decided then and never one twice.
   */
  async function loadPlan(delivery: ClaimedDelivery, composed: ComposedMail, dlog: Logger): Promise<RouteMailRecord[]> {
    const recorded = await options.store.listRouteMails([delivery.id]);
    if (recorded.length > 0) return recorded;
    const decisions =
      composed.kind === 'notice'
        ? [{ route: composed.route, position: 0, outcome: 'send' as const, reason: 'relay notice (not routed)', reminder: false }]
        : await options.planRoutes(delivery, composed);
    const plan = await options.store.recordRouteDecisions(delivery.id, decisions, options.clock.now());
    for (const d of plan) {
      if (d.outcome === 'suppressed') dlog.info({ route: d.route, reason: d.reason }, `route ${d.route}: mail suppressed`);
      else dlog.debug({ route: d.route, outcome: d.outcome, reason: d.reason }, `route ${d.route}: ${d.outcome}`);
    }
    return plan;
  }

  /** Sends every route mail not sent yet; one route failing does not hold back the others. */
  async function sendPending(delivery: ClaimedDelivery, composed: ComposedMail, plan: RouteMailRecord[], started: number, dlog: Logger, wasProbe: boolean, ticket: SendTicket): Promise<void> {
    let holding = false;
    /** Set when the ledger was full at this delivery's turn: it sends nothing more now. */
    let heldBack = false;
    /** Set when the server went away while this delivery waited for its turn: it waits with the queue. */
    let deferredUntil: number | undefined;
    let transient: { route: string; failure: FailureClass } | undefined;
    /** Set when the SMTP server as a whole failed: the circuit breaker's end of pause. */
    let pausedUntil: number | undefined;
    let permanent: { route: string; failure: FailureClass } | undefined;
    const sentNow: string[] = [];
    let firstResponse = '';
    // A route that failed permanently is tried again only when the delivery starts over (first attempt
    // or an operator's requeue), not on every retry of another route's transient failure.
    const due = plan.filter((m) => m.state === 'pending' || (m.state === 'failed' && delivery.attempts <= 1));
    for (const mail of due) {
      const rlog = dlog.child({ route: mail.route });
      let message: SendMailOptions | undefined;
      let composeError: unknown;
      try {
        message =
          composed.kind === 'notice'
            ? mail.route === composed.route
              ? composed.message
              : undefined
            : await composed.messageFor({ name: mail.route, reminder: mail.reminder, reason: mail.reason });
      } catch (error) {
        composeError = error ?? new Error('rendering failed');
      }
      if (message === undefined) {
        const failure: FailureClass =
          composeError === undefined
            ? { kind: 'permanent', code: 'ROUTE_REMOVED', message: `route ${mail.route} is no longer in ROUTES_FILE; restore it and retry the delivery`, configProblem: true, scope: 'message' }
            : renderFailure(composeError);
        await record(delivery, { kind: 'route-failed', route: mail.route, now: options.clock.now(), error: failure.message, code: failure.code, permanent: true });
        permanent ??= { route: mail.route, failure };
        continue;
      }
      rlog.debug({ subject: message.subject }, 'mail rendered');
      if (!holding) {
        await ticket.acquire();
        holding = true;
        // Prepared before the server failed for an older delivery: it does not try, it waits for the
        // probe like every other delivery behind it.
        if (breaker.state !== 'closed' && !wasProbe) {
          deferredUntil = Math.max(breaker.openUntil, options.clock.now());
          break;
        }
      }
      // The ledger filled up while this delivery waited: a mail sent now could not be recorded. It
      // leaves its claim to expire (recording a retry would be refused too) and is claimed again later.
      // A probe still goes: held back, it would leave the breaker probing and the queue paused for good.
      if (options.ledger.full && !wasProbe) {
        heldBack = true;
        break;
      }
      try {
        const result = await options.transport.send(message);
        if (wasProbe && breaker.state !== 'closed') log.info('the SMTP server answers again: resuming deliveries, oldest first');
        breaker.serverReached();
        await record(delivery, { kind: 'route-sent', route: mail.route, now: options.clock.now(), messageId: String(message.messageId ?? result.messageId), response: result.response });
        mail.state = 'sent';
        mail.messageId = String(message.messageId ?? result.messageId);
        sentNow.push(mail.route);
        if (sentNow.length === 1) firstResponse = result.response;
        rlog.info({ messageId: message.messageId, response: result.response, ...(result.path ? { path: result.path } : {}) }, result.path ? `mail written to ${result.path}` : 'mail sent');
      } catch (error) {
        const failure = classifyFailure(error);
        await record(delivery, { kind: 'route-failed', route: mail.route, now: options.clock.now(), error: failure.message, code: failure.code, permanent: failure.kind === 'permanent' });
        if (failure.kind === 'transient') transient ??= { route: mail.route, failure };
        else permanent ??= { route: mail.route, failure };
        if (failure.scope === 'server') {
          const alreadyOpen = breaker.state !== 'closed' && !wasProbe;
          pausedUntil = breaker.serverFailed(options.clock.now(), wasProbe);
          if (!alreadyOpen) log.warn({ code: failure.code, error: failure.message, pausedUntil: new Date(pausedUntil).toISOString(), failures: breaker.failures }, 'the SMTP server is unavailable: pausing all deliveries, then probing with the oldest');
          // The other routes would fail the same way: they wait for the server with this delivery.
          break;
        }
        breaker.serverReached();
      }
    }

    // Every route's outcome is recorded (or held by the ledger, which records it before anything else of
    // this delivery): the next delivery may talk to the server.
    ticket.release();
    const now = options.clock.now();
    if (heldBack) {
      dlog.warn({ sentRoutes: sentNow }, 'not sent now: too many outcomes wait to be recorded; the delivery is claimed again when its lease ends');
      return;
    }
    // Deferred before its first send of this attempt: nothing was tried, so nothing is decided yet (a
    // route that already failed for good is recorded as such and settled when the delivery finishes).
    if (deferredUntil !== undefined) {
      await record(delivery, { kind: 'retry', now, nextAttemptAt: deferredUntil, error: 'the SMTP server was unavailable: waiting for it in queue order', code: 'SMTP_PAUSED' });
      dlog.debug({ nextAttemptAt: new Date(deferredUntil).toISOString() }, 'not sent: the SMTP server is paused; waiting with the queue');
      return;
    }
    if (transient && delivery.attempts < options.retry.maxAttempts) {
      const { failure } = transient;
      // A server-wide failure puts the delivery back at the pause's end, not at a jittered time of its
      // own, so that the queue keeps its order: the claim takes due deliveries oldest first.
      const nextAttemptAt = pausedUntil ?? now + computeBackoffMs(delivery.attempts, options.retry, random);
      const error = `route ${transient.route}: ${failure.message}`;
      await record(delivery, { kind: 'retry', now, nextAttemptAt, error, code: failure.code });
      const fields = { route: transient.route, code: failure.code, error: failure.message, nextAttemptAt: new Date(nextAttemptAt).toISOString(), sentRoutes: sentNow };
      if (failure.configProblem) dlog.error(fields, 'send failed: configuration problem (will retry)');
      else dlog.warn(fields, 'send failed; will retry');
      options.onOutcome?.({ type: 'retry', delivery, failure, nextAttemptAt, durationMs: now - started });
      return;
    }
    permanent ??= findEarlierPermanent(plan);
    if (transient || permanent) {
      const failed = (permanent ?? transient)!;
      const failure = { ...failed.failure };
      if (failure.kind === 'transient') failure.message = `gave up after ${delivery.attempts} attempts: ${failure.message}`;
      failure.message = `route ${failed.route}: ${failure.message}`;
      await finishDead(delivery, failure, started, dlog);
      return;
    }
    const sent = plan.filter((m) => m.state === 'sent');
    if (sent.length === 0) {
      await record(delivery, { kind: 'sent', now, messageId: '' });
      const reasons = Object.fromEntries(plan.map((m) => [m.route, m.reason]));
      dlog.info({ reasons }, 'no mail for this report: every route suppressed it or did not match');
      options.onOutcome?.({ type: 'suppressed', delivery, reasons, durationMs: now - started });
      return;
    }
    await record(delivery, { kind: 'sent', now, messageId: sent[0]!.messageId ?? '' });
    options.onOutcome?.({ type: 'sent', delivery, messageId: sent[0]!.messageId ?? '', response: firstResponse, durationMs: now - started, routes: sentNow });
  }

  async function finishDead(delivery: ClaimedDelivery, failure: FailureClass, started: number, dlog: Logger): Promise<void> {
    const now = options.clock.now();
    await record(delivery, { kind: 'dead', now, error: failure.message, code: failure.code });
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
      if (!running || stopping || kickPending) return;
      // A burst of webhooks in one turn wakes the worker once, not once each.
      kickPending = true;
      setImmediate(() => {
        kickPending = false;
        void tick();
      });
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

/** A template or composition error: the same input fails the same way, so it is permanent. */
function renderFailure(error: unknown): FailureClass {
  const failure = { ...classifyFailure(error), kind: 'permanent' as const };
  if (failure.code === 'UNKNOWN') failure.code = 'RENDER';
  return failure;
}

/** A route that failed permanently in an earlier attempt (still `failed`): the delivery cannot be `sent`. */
function findEarlierPermanent(plan: RouteMailRecord[]): { route: string; failure: FailureClass } | undefined {
  const failed = plan.find((m) => m.state === 'failed');
  if (!failed) return undefined;
  return { route: failed.route, failure: { kind: 'permanent', code: failed.lastErrorCode ?? 'UNKNOWN', configProblem: false, scope: 'message', message: failed.lastError ?? 'failed earlier' } };
}

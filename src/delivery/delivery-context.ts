import type { Notifier } from '../notify';
import type { Clock, Logger } from '../shared';
import type { ClaimedDelivery, Store } from '../store';
import type { FailureClass } from '../notify';
import type { OutcomeLedger, OutcomeWrite } from './outcome-ledger';
import type { ProbeSlot } from './probe-slot';
import type { RetryDecider } from './retry-policy';
import type { DeliveryComposer } from '../compose';
import type { RoutePlanner } from './route-planner';
import type { StepPacer } from './step-pacer';

export type WorkerOutcome =
  /** Every route mail of the delivery is sent (`routes`: those sent in this attempt, in order; `response`: the first one's SMTP answer). */
  | { type: 'sent'; delivery: ClaimedDelivery; messageId: string; response: string; durationMs: number; routes: string[] }
  /** No route mailed it: each matching route's notify policy held it back, or none matched. */
  | { type: 'suppressed'; delivery: ClaimedDelivery; reasons: Record<string, string>; durationMs: number }
  | { type: 'retry'; delivery: ClaimedDelivery; failure: FailureClass; nextAttemptAt: number; durationMs: number }
  | { type: 'dead'; delivery: ClaimedDelivery; failure: FailureClass; durationMs: number };

/** One route's mail was accepted by the server and its outcome recorded (the sent-mail copy is kept then). */
export interface RouteSentEvent {
  delivery: ClaimedDelivery;
  route: string;
  messageId: string;
  response: string;
}

/**
 * What every step of the worker (claim, compose, send, settle) works with. Fixed for the worker's
 * life; the only state in it is held by the objects that own it (retry policy, probe slot, ledger).
 */
export interface DeliveryContext {
  readonly store: Store;
  readonly transport: Notifier;
  readonly compose: DeliveryComposer;
  readonly planRoutes: RoutePlanner;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly leaseMs: number;
  /** This process's name on its leases. */
  readonly owner: string;
  readonly ledger: OutcomeLedger;
  /** The one place that decides backoff, pause, probe, dead or held for the operator (retry-policy.ts). */
  readonly policy: RetryDecider;
  readonly probe: ProbeSlot;
  /** One CPU-heavy step (compose, a route mail's render) per turn of the event loop: the webhook acks come first. */
  readonly pacer: StepPacer;
  readonly onOutcome?: (event: WorkerOutcome) => void;
  readonly onRouteSent?: (event: RouteSentEvent) => void;
}

/**
 * Records an outcome through the ledger: at once, or kept (and the lease kept alive) until the store
 * takes it. Never rejects, so no step has to handle a failed record.
 */
export function recordOutcome(context: DeliveryContext, delivery: ClaimedDelivery, write: OutcomeWrite): Promise<'recorded' | 'held'> {
  return context.ledger.record({ deliveryId: delivery.id, reportId: delivery.reportId, owner: context.owner }, write);
}

export {
  classifyFailure,
  classifyRenderFailure,
  buildFailureClass,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from './classify-failure';
export { computeBackoffMs, maxRetrySpanMs, type RetryPolicy } from './backoff';
export { createRoutePlanner, type RoutePlanner } from './route-planner';
export {
  createOutcomeLedger,
  MAX_UNRECORDED_OUTCOMES,
  type OutcomeLedger,
  type OutcomeLedgerOptions,
  type OutcomeWrite,
  type OutcomeOwner,
  type LedgerError,
  type LedgerTimers,
} from './outcome-ledger';
export { createWorker, type TryNowResult, type Worker, type WorkerOptions } from './create-worker';
export type { RouteSentEvent, WorkerOutcome } from './delivery-context';
export { createRetention, DAY_MS, type Retention } from './retention';
export {
  createCircuitBreaker,
  DEFAULT_PAUSE_AFTER_4XX,
  type BreakerCause,
  type BreakerState,
  type CircuitBreaker,
  type SmtpPauseStatus,
} from './circuit-breaker';
export {
  buildDeliveriesJson,
  buildDeliveryJson,
  buildEmlFileName,
  buildSentMailsJson,
  findMessageId,
  type DeliveryJson,
  type DeliveryRouteJson,
  type SentMailJson,
} from './build-delivery-json';

export {
  classifyFailure,
  classifyRenderFailure,
  buildFailureClass,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from '../notify';
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
  computeBackoffMs,
  createRetryDecider,
  maxRetrySpanMs,
  DEFAULT_PAUSE_AFTER_4XX,
  type AttemptOutcome,
  type BreakerCause,
  type BreakerState,
  type NextState,
  type RetryDecider,
  type RetrySettings,
  type SmtpPauseStatus,
} from './retry-policy';
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

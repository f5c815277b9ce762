export {
  classifyFailure,
  classifyRenderFailure,
  buildFailureClass,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from '../notify';
export { createWorker, type TryNowResult, type Worker, type WorkerOptions } from './create-worker';
export { type Composer, type Composers } from './compose-batch';
export { createBatchHistory, type BatchHistory } from './create-batch-history';
export type { UnrecordedStatus, WorkerOutcome } from './settle-batch';
export {
  computeBackoffMs,
  createRetryDecider,
  maxRetrySpanMs,
  type AttemptOutcome,
  type BreakerCause,
  type BreakerState,
  type NextState,
  type RetryDecider,
  type RetrySettings,
  type SmtpPauseStatus,
} from './retry-policy';

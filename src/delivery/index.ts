export { createWorker, type TryNowResult, type Worker } from './create-worker';
export type { BatchItem, Composers } from './compose-batch';
export { createBatchHistory } from './create-batch-history';
export { computeBackoffMs, createRetryDecider } from './retry-policy';
export type { AttemptOutcome, NextState, RetryDecider, QueuePauseStatus } from './retry-policy';

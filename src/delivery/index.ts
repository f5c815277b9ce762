export { classifyFailure, type FailureClass, type FailureKind } from './classify-failure';
export { computeBackoffMs, maxRetrySpanMs, type RetryPolicy } from './backoff';
export { createMailComposer, UnreadableDeliveryError, type MailComposer, type MailComposerOptions } from './compose-mail';
export { createWorker, type Worker, type WorkerOptions, type WorkerOutcome } from './worker';

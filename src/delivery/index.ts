export { classifyFailure, type FailureClass, type FailureKind } from './classify-failure';
export { computeBackoffMs, maxRetrySpanMs, type RetryPolicy } from './backoff';
export { createMailComposer, buildFilterHeaders, UnreadableDeliveryError, type MailComposer, type MailComposerOptions, type ComposedReport, type ComposedNotice, type ComposedMail, type ReportComposer, type RouteContext } from './compose-mail';
export { createRoutePlanner, type RoutePlanner } from './route-planner';
export { createWorker, type Worker, type WorkerOptions, type WorkerOutcome } from './worker';

export { buildFailureClass, classifyFailure, classifyRenderFailure, readFailureCode, type FailureClass } from './classify-failure';
export type { Notifier, NotifyResult, TransportDescriptor } from './notifier';
export { createNotifier, findTransport, TRANSPORTS } from './create-notifier';
export { createSmtpNotifier } from './create-smtp-notifier';
export { createFileNotifier } from './create-file-notifier';

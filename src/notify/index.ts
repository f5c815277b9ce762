export {
  buildFailureClass,
  classifyFailure,
  classifyRenderFailure,
  readFailureCode,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from './classify-failure';
export type { Notifier, NotifierIo, NotifierSettings, NotifyResult, TransportDescriptor } from './notifier';
export { createNotifier, findTransport, TRANSPORTS } from './create-notifier';
export { createSmtpNotifier } from './create-smtp-notifier';
export { createFileNotifier } from './create-file-notifier';

export { buildFailureClass, classifyFailure, classifyRenderFailure, readFailureCode, type FailureClass } from './classify-failure';
export type { Notifier, NotifyResult, TransportDescriptor } from './notifier';
export {
  buildFailureCatalogue,
  configureTransport,
  createNotifier,
  FAILURE_CATALOGUE,
  findTransport,
  TRANSPORTS,
  type TransportConfig,
} from './create-notifier';
export { describeMailError } from './describe-mail-error';
export { createSmtpNotifier, type SmtpConfig } from './smtp-transport';
export { createFileNotifier } from './file-transport';
export { GRAPH_CONCURRENCY, GRAPH_SETTINGS, GRAPH_TIMEOUT_MS } from './graph-transport';
export { OAUTH2_TIMEOUT_MS, type OAuth2Config } from './oauth2-settings';
export { SMTP_CONNECTION_TIMEOUT_MS, SMTP_GREETING_TIMEOUT_MS, SMTP_SETTINGS, SMTP_SOCKET_TIMEOUT_MS } from './smtp-transport';

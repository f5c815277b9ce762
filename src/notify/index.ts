export { buildFailureClass, classifyFailure, classifyRenderFailure, readFailureCode } from './classify-failure';
export type { FailureClass, Notifier, NotifierIo, TransportDescriptor } from './notifier';
export * from './transports';
export { describeMailError } from './describe-mail-error';
export { GRAPH_CONCURRENCY, GRAPH_TIMEOUT_MS } from './graph-transport';
export { OAUTH2_TIMEOUT_MS, type OAuth2Config } from './oauth2-settings';
export { SMTP_CONNECTION_TIMEOUT_MS, SMTP_GREETING_TIMEOUT_MS, SMTP_SOCKET_TIMEOUT_MS, type SmtpConfig } from './smtp-transport';

export {
  buildFailureClass,
  classifyFailure,
  classifyRenderFailure,
  readFailureCode,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from './classify-failure';
export type { Notifier, NotifyResult } from './notifier';
export { createNotifier } from './create-notifier';
export { createSmtpNotifier } from './create-smtp-notifier';
export { createFileNotifier } from './create-file-notifier';
export { classifyGraphResponse, parseRetryAfterMs, withBccHeader } from './create-graph-notifier';
export { createAccessTokenFetcher, OAuth2Error } from './fetch-access-token';
export { createTokenCache } from './create-token-cache';

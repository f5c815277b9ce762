export {
  buildFailureClass,
  classifyFailure,
  classifyRenderFailure,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from './classify-failure';
export { buildFailedResult, type Notifier, type NotifierIo, type NotifyResult } from './notifier';
export { createNotifier, type NotifierSettings } from './create-notifier';
export { createSmtpNotifier } from './create-smtp-notifier';
export { createFileNotifier } from './create-file-notifier';
export { createGraphNotifier, classifyGraphResponse, parseRetryAfterMs, withBccHeader, GraphError } from './create-graph-notifier';
export { createAccessTokenFetcher, OAuth2Error, type AccessToken, type FetchAccessToken } from './fetch-access-token';
export { createTokenCache, TOKEN_REFRESH_BEFORE_EXPIRY_MS, type TokenCache } from './create-token-cache';

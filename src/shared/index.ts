export { RelayError, ERROR_CATALOGUE, type ErrorCode, type ErrorIssue } from './errors';
export {
  RELAY_FAILURES,
  buildFailureFacts,
  describeFailureOutcome,
  isCertificateFailure,
  parseFailureCode,
  readFailureFacts,
  type FailureCatalogue,
  type FailureFacts,
} from './failure-catalogue';
export { systemClock, type Clock } from './clock';
export { createAuthThrottle, type AuthThrottle } from './auth-throttle';
export { createActivityCounter, type ActivityCounter } from './activity-counter';
export { coalesceRuns, createRepeatingTask } from './create-repeating-task';
export { createLogger, createSilentLogger, type Logger } from './logger';
export { findPackageRoot } from './paths';
export { compareNames } from './compare-names';
export { neutralizeText, neutralizeView } from './neutralize-text';
export { createSecretMask, SECRET_MARK, type SecretMask } from './mask-secrets';
export {
  address,
  addressList,
  bool,
  cidrList,
  duration,
  httpUrl,
  nonNegativeInt,
  port,
  positiveInt,
  isMailbox,
  isLoopbackHost,
  parseDurationMs,
  describeShortWebhookSecret,
  parseCidr,
} from './env-fields';
export { describeZodIssue, type ZodIssueFacts } from './describe-zod-issue';
export { setting, SETTING_GROUPS, type ConfigIssue, type SettingGroup, type SettingMeta } from './setting-meta';
export { chooseProxy, describeProxySettings, describeProxyUrl, readProxySettings, type ProxySettings } from './proxy-settings';

export {
  ERROR_CATALOGUE,
  FAILURE_CATALOGUE,
  RelayError,
  buildErrorBody,
  isFailureCode,
  parseFailureCode,
  type ErrorCode,
  type ErrorIssue,
  type FailureCode,
  type FailureSource,
} from './errors';
export { systemClock, type Clock } from './clock';
export { createActivityCounter, type ActivityCounter } from './activity-counter';
export { createLogger, createSilentLogger, resolveLogFormat, type Logger, type LoggerOptions } from './logger';
export { findPackageRoot } from './paths';
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
  parseCidr,
} from './env-fields';
export { describeZodIssue, type ZodIssueFacts } from './describe-zod-issue';

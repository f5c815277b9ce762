export { ERROR_CATALOGUE, RelayError, buildErrorBody, type ErrorCode, type ErrorIssue } from './errors';
export { systemClock, type Clock } from './clock';
export { createLogger, createSilentLogger, type Logger, type LoggerOptions } from './logger';
export { findPackageRoot } from './paths';
export { neutralizeText } from './neutralize-text';

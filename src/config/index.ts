export { loadConfig, ConfigError, type Config, type SmtpConfig, type GraphConfig, type OAuth2Config } from './load-config';
export { redactConfig } from './redact-config';
export { type SourceConfig } from './sources-file';
export { planCatchUp, describeCatchUp } from './describe-catch-up';
export { DEFAULT_SOURCE_NAME } from '../webhook';
export { EnvSchema, SECRET_VARIABLES } from './schema';
export { listSettings, type Setting } from './list-settings';
export { parseDurationMs } from '../shared';
export { describeSettings, renderEnvExample, replaceSettingsReference } from './describe-settings';

export {
  loadConfig,
  ConfigError,
  type Config,
  type ConfigIssue,
  type SmtpConfig,
  type GraphConfig,
  type OAuth2Config,
  type LoadConfigOptions,
} from './load-config';
export { redactConfig } from './redact-config';
export { describeUnsignedWebhook, listBootWarnings, type BootWarning } from './list-boot-warnings';
export { MAX_SOURCES, type SourceConfig, type CatchUpSettings } from './sources-file';
export { planCatchUp, describeCatchUp, type CatchUpPlan } from './describe-catch-up';
export { DEFAULT_SOURCE_NAME } from '../webhook';
export { EnvSchema, SECRET_VARIABLES, type Env } from './schema';
export { listSettings, type Setting, type SettingsInForce } from './list-settings';
export { parseDurationMs, isMailbox } from '../shared';
export {
  describeSettings,
  renderEnvExample,
  renderSettingsReference,
  replaceSettingsReference,
  type SettingDoc,
} from './describe-settings';

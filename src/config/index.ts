export {
  loadConfig,
  redactConfig,
  ConfigError,
  type Config,
  type ConfigIssue,
  type SmtpConfig,
  type GraphConfig,
  type OAuth2Config,
  type LoadConfigOptions,
} from './load-config';
export { EnvSchema, SECRET_VARIABLES, type Env } from './schema';
export { parseDurationMs, isMailbox } from '../shared';

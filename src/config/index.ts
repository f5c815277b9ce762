export { loadConfig, ConfigError, type Config } from './load-config';
export { HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, PAUSE_AFTER_4XX_IN_A_ROW, TRANSPORT_CHECK_INTERVAL_MS } from './fixed-limits';
export { describeUnsignedWebhook, listBootWarnings, redactConfig } from './redact-config';
export { planCatchUp, describeCatchUp, SourcesFileSchema, type SourceConfig } from './sources-file';
export { describeSettings, formatSettings } from './describe-settings';
export { RETIRED_SETTINGS } from './retired-settings';

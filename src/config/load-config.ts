import path from 'node:path';
import { buildDefaultRoute, type Route } from '../routing';
import { isLoopbackHost } from '../shared';
import { configureTransport, findTransport, TRANSPORTS, type TransportConfig, type TransportDescriptor } from '../notify';
import { buildEnvSchema, type Env } from './schema';
import { checkSourceRules } from './check-source-rules';
import { checkWebhookExposure } from './check-webhook-exposure';
import {
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_REQUEST_TIMEOUT_MS,
  LEASE_MS,
  NETBOX_ENRICH_BUDGET_MS,
  NETBOX_TIMEOUT_MS,
  RETENTION_INTERVAL_MS,
  RETRY_BASE_MS,
  RETRY_MAX_ATTEMPTS,
  RETRY_MAX_DELAY_MS,
  WEBHOOK_MAX_BYTES,
  WORKER_POLL_MS,
} from './fixed-limits';
import { collectSecretValues } from './collect-secret-values';
import type { ConfigIssue } from './config-issue';
import { parseEnvironment, readSecretFiles } from './parse-environment';
import { readRoutes } from './routes-file';
import { buildDefaultSource, normalizeWebhookPath, readSourcesFile, type SourceConfig } from './sources-file';
import { checkRetiredSettings, PAUSE_AFTER_4XX_IN_A_ROW, SMTP_CHECK_INTERVAL_MS, WEBHOOK_RATE_LIMIT_WINDOW_MS } from './retired-settings';
import { readWaiversFile } from './waivers-file';
import type { Waiver } from '../waivers';
import { DEFAULT_SOURCE_NAME } from '../webhook';

export type { ConfigIssue } from './config-issue';

/** Thrown by {@link loadConfig} with every problem found, not just the first. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/**
 * The relay's configuration: every field's type comes from {@link EnvSchema} through the builders below,
 * so a setting is defined once (the schema) and read under one name.
 */
export type Config = OptionalWhenUndefined<ReturnType<typeof buildConfig>> & {
  /** Variables still set that the relay no longer reads, each naming what replaced it: said by check-config and at start. */
  warnings: ConfigIssue[];
};

/** A built object's type as callers write one (tests, tools): a field that may be undefined may be left out. */
type OptionalWhenUndefined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: T[K];
};

export interface LoadConfigOptions {
  /** Reads a `<NAME>_FILE` secret; injected so only the entry point touches the file system. */
  readFile: (file: string) => string;
  /** Base for relative paths (DATA_DIR); default: the current directory. */
  cwd?: string;
  /** The transports mails may go through, whose settings sections join the schema; absent: notify's TRANSPORTS. */
  transports?: readonly TransportDescriptor[];
}

/** Default recipient when writing .eml files with no MAIL_TO: a newcomer can still open the mail. */
const FILE_MODE_DEFAULT_TO = 'compliance-reports@localhost';

/**
 * Validates the environment once, at boot. Empty values count as unset (as `${VAR:-}` in compose
 * produces them). Throws {@link ConfigError} listing every problem by variable name, in one pass: a value
 * the schema refuses is reported, and every rule that does not depend on it is still checked.
 */
export function loadConfig(rawEnv: Record<string, string | undefined>, options: LoadConfigOptions): Config {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(rawEnv)) {
    if (value !== undefined && value !== '') env[key] = value;
  }
  const transports = options.transports ?? TRANSPORTS;
  const schema = buildEnvSchema(transports);
  const issues = readSecretFiles(env, options.readFile, schema);
  const { values: e, broken, issues: schemaIssues } = parseEnvironment(env, schema);
  issues.push(...schemaIssues);
  const transport = configureTransport(
    e,
    {
      issues,
      broken,
      readFile: options.readFile,
      rawEnv: env,
      outboxDir: path.join(path.resolve(options.cwd ?? process.cwd(), e.DATA_DIR), 'mail'),
      requireRecipients: (when) => checkRecipientsRequired(e, broken, when, issues),
    },
    transports,
  );
  const host = e.HOST ?? (e.WEBHOOK_SECRET !== undefined ? '0.0.0.0' : '127.0.0.1');
  if (!broken.has('HOST') && !broken.has('WEBHOOK_ALLOW_UNSIGNED')) issues.push(...checkWebhookExposure(rawEnv, e, host));
  issues.push(...checkCrossFieldRules(e, broken));
  const routesFile = e.ROUTES_FILE ? path.resolve(options.cwd ?? process.cwd(), e.ROUTES_FILE) : undefined;
  const routes = routesFile ? readRoutes(routesFile, options.readFile, issues) : undefined;
  const cwd = options.cwd ?? process.cwd();
  const warnings = checkRetiredSettings(env);
  const sources = e.SOURCES_FILE ? readNamedSources(e, env, { ...options, cwd }, { issues, warnings }) : [];
  issues.push(...checkSourceRules(e, host, sources, routes));
  const waivers = readWaivers(e, { ...options, cwd }, sources, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  const described = findTransport(transport, transports);
  return {
    ...buildConfig(e, { host, transport, described, routesFile, routes, sources, cwd, waivers }),
    warnings,
  };
}

/** Real mail needs recipients: MAIL_TO, or ROUTES_FILE naming them. */
function checkRecipientsRequired(e: Env, broken: ReadonlySet<string>, when: string, issues: ConfigIssue[]): void {
  if ((!e.MAIL_TO || e.MAIL_TO.length === 0) && e.ROUTES_FILE === undefined && !broken.has('MAIL_TO') && !broken.has('ROUTES_FILE')) {
    issues.push({
      variable: 'MAIL_TO',
      message: `is required when ${when} and there is no ROUTES_FILE (comma-separated addresses)`,
    });
  }
}

/** SOURCES_FILE's sources; their problems (and fields no longer read) are pushed onto `found`, each naming the source and the field. */
function readNamedSources(
  e: Env,
  env: Record<string, string>,
  options: LoadConfigOptions & { cwd: string },
  found: { issues: ConfigIssue[]; warnings: ConfigIssue[] },
): SourceConfig[] {
  const messages: string[] = [];
  const retired: string[] = [];
  const sources = readSourcesFile(
    {
      file: path.resolve(options.cwd, e.SOURCES_FILE!),
      readFile: options.readFile,
      env,
      webhookPath: normalizeWebhookPath(e.WEBHOOK_PATH),
      cwd: options.cwd,
      catchUpEveryMs: e.CATCH_UP_EVERY,
    },
    messages,
    retired,
  );
  found.issues.push(...messages.map((message) => ({ variable: 'SOURCES_FILE', message })));
  found.warnings.push(...retired.map((message) => ({ variable: 'SOURCES_FILE', message })));
  return sources;
}

/** Accepted exceptions: WAIVERS_FILE's entries, read-only. */
interface WaiversConfig {
  file?: string;
  fileWaivers: Waiver[];
}

/** WAIVERS_FILE's entries, each checked against the configured sources; problems go onto `issues`. */
function readWaivers(e: Env, options: LoadConfigOptions & { cwd: string }, sources: SourceConfig[], issues: ConfigIssue[]): WaiversConfig {
  if (!e.WAIVERS_FILE) return { fileWaivers: [] };
  const file = path.resolve(options.cwd, e.WAIVERS_FILE);
  const messages: string[] = [];
  const context = { file, readFile: options.readFile, sources: [DEFAULT_SOURCE_NAME, ...sources.map((s) => s.name)] };
  const fileWaivers = readWaiversFile(context, messages);
  issues.push(...messages.map((message) => ({ variable: 'WAIVERS_FILE', message })));
  return { file, fileWaivers };
}

/**
 * Rules between variables. Each applies only when its feature is on, and only when the variables it compares
 * were valid: a rule checked against a default that stands in for a refused value would report nonsense.
 */
function checkCrossFieldRules(e: Env, broken: ReadonlySet<string>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const valid = (...names: string[]) => names.every((n) => !broken.has(n));
  if (e.WEBHOOK_SECRET_PREVIOUS !== undefined && e.WEBHOOK_SECRET === undefined && valid('WEBHOOK_SECRET')) {
    issues.push({ variable: 'WEBHOOK_SECRET_PREVIOUS', message: 'is only accepted alongside WEBHOOK_SECRET (during a rotation)' });
  }
  if (e.NETBOX_URL === undefined && valid('NETBOX_URL')) {
    for (const v of ['NETBOX_TOKEN', 'NETBOX_CA_FILE'] as const) {
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without NETBOX_URL' });
    }
  }
  return issues;
}

/** What loadConfig has read and checked before the configuration is assembled. */
interface ConfigParts {
  host: string;
  transport: TransportConfig;
  /** The descriptor of the transport in force. */
  described: TransportDescriptor;
  routesFile?: string;
  routes?: Route[];
  sources: SourceConfig[];
  cwd: string;
  waivers: WaiversConfig;
}

/** The validated environment as the relay's typed configuration. */
function buildConfig(e: Env, built: ConfigParts) {
  const { host, transport, described, routesFile, routes, cwd } = built;
  const dataDir = path.resolve(cwd, e.DATA_DIR);
  const defaultSource = buildDefaultSource(e, { webhookPath: normalizeWebhookPath(e.WEBHOOK_PATH), cwd });
  const secrets = defaultSource.secrets;
  return {
    http: {
      host,
      port: e.PORT,
      trustProxy: parseTrustProxy(e.TRUST_PROXY),
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
      headersTimeoutMs: HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: HTTP_REQUEST_TIMEOUT_MS,
    },
    // The default source's path, secrets and allowed addresses are in `sources[0]`; these apply to every source.
    webhook: {
      unsignedFromNetwork: secrets.length === 0 && !isLoopbackHost(host),
      maxBytes: WEBHOOK_MAX_BYTES,
      rateLimit: { max: e.WEBHOOK_RATE_LIMIT, windowMs: WEBHOOK_RATE_LIMIT_WINDOW_MS },
    },
    retention: { days: e.RETENTION_DAYS, intervalMs: RETENTION_INTERVAL_MS },
    store: { dataDir, sqliteSynchronous: e.SQLITE_SYNCHRONOUS, databaseUrl: e.DATABASE_URL },
    transport,
    mail: {
      from: e.MAIL_FROM,
      timezone: e.MAIL_TIMEZONE,
      templatesDir: e.TEMPLATES_DIR ? path.resolve(cwd, e.TEMPLATES_DIR) : undefined,
      outboxDir: path.join(dataDir, 'mail'),
    },
    // The default source's URL, token and CA are in `sources[0].netbox`; these apply to every source.
    netbox: {
      timeoutMs: NETBOX_TIMEOUT_MS,
      enrichBudgetMs: NETBOX_ENRICH_BUDGET_MS,
    },
    sources: [defaultSource, ...built.sources],
    routing: {
      file: routesFile,
      routes: routes ?? [
        buildDefaultRoute({
          to: e.MAIL_TO && e.MAIL_TO.length > 0 ? e.MAIL_TO : [FILE_MODE_DEFAULT_TO],
          cc: e.MAIL_CC ?? [],
          bcc: e.MAIL_BCC ?? [],
        }),
      ],
    },
    retry: { maxAttempts: RETRY_MAX_ATTEMPTS, baseMs: RETRY_BASE_MS, maxDelayMs: RETRY_MAX_DELAY_MS },
    worker: {
      pollMs: WORKER_POLL_MS,
      leaseMs: LEASE_MS,
      concurrency: described.concurrency(transport.settings),
      pauseAfter4xx: PAUSE_AFTER_4XX_IN_A_ROW,
    },
    log: { level: e.LOG_LEVEL },
    admin: { token: e.ADMIN_TOKEN },
    waivers: built.waivers,
    relayUrl: e.RELAY_URL,
    observe: { metricsToken: e.METRICS_TOKEN, smtpCheckIntervalMs: SMTP_CHECK_INTERVAL_MS },
    secretValues: [...collectSecretValues(e, built.sources), ...described.secrets(transport.settings)],
  };
}

/** express's `trust proxy`: true/false, a hop count, or a list of addresses/CIDRs. */
function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

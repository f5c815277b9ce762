import path from 'node:path';
import { buildDefaultRoute, parseRoutesFile, readYamlListFile, type Route } from '../routing';
import { isLoopbackHost, readProxySettings, type ConfigIssue, type ProxySettings } from '../shared';
import { configureTransport, findTransport, TRANSPORTS, type TransportConfig, type TransportDescriptor } from '../notify';
import { buildEnvSchema, SECRET_VARIABLES, type Env } from './schema';
import { checkCaFiles, checkCrossFieldRules, checkRecipientsRequired, checkSourceRules, checkWebhookExposure } from './check-rules';
import * as fixed from './fixed-limits';
import { parseEnvironment, readSecretFiles } from './parse-environment';
import { buildDefaultSource, readSourcesFile, type SourceConfig } from './sources-file';
import { checkRetiredSettings } from './retired-settings';
import { readWaiversFile } from './waivers-file';
import type { Waiver } from '../waivers';
import { DEFAULT_SOURCE_NAME } from '../webhook';

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
  const env = Object.fromEntries(Object.entries(rawEnv).filter(([, value]) => value !== undefined && value !== '')) as Record<
    string,
    string
  >;
  const cwd = options.cwd ?? process.cwd();
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
      outboxDir: path.join(path.resolve(cwd, e.DATA_DIR), 'mail'),
      requireRecipients: (when) => checkRecipientsRequired(e, broken, when, issues),
    },
    transports,
  );
  const host = e.HOST ?? (e.WEBHOOK_SECRET !== undefined ? '0.0.0.0' : '127.0.0.1');
  if (!broken.has('HOST') && !broken.has('WEBHOOK_ALLOW_UNSIGNED')) issues.push(...checkWebhookExposure(rawEnv, e, host));
  issues.push(...checkCrossFieldRules(e, broken));
  const reportAs = (variable: string) => (message: string) => issues.push({ variable, message });
  const routesFile = e.ROUTES_FILE ? path.resolve(cwd, e.ROUTES_FILE) : undefined;
  const routes = routesFile ? readYamlListFile(routesFile, options.readFile, parseRoutesFile, reportAs('ROUTES_FILE')) : undefined;
  const warnings = checkRetiredSettings(env);
  const sources = readSourcesFile(e, { readFile: options.readFile, env, cwd }, issues, warnings);
  issues.push(...checkSourceRules(e, host, sources, routes));
  issues.push(...checkCaFiles(e, sources, { readFile: options.readFile, cwd }));
  let waivers: ConfigParts['waivers'] = { fileWaivers: [] };
  if (e.WAIVERS_FILE) {
    const file = path.resolve(cwd, e.WAIVERS_FILE);
    const context = { file, readFile: options.readFile, sources: [DEFAULT_SOURCE_NAME, ...sources.map((s) => s.name)] };
    waivers = { file, fileWaivers: readWaiversFile(context, reportAs('WAIVERS_FILE')) };
  }
  const proxy = readProxySettings(env, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  const described = findTransport(transport, transports);
  return {
    ...buildConfig(e, { host, transport, described, routesFile, routes, sources, cwd, waivers, proxy }),
    warnings,
  };
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
  /** Accepted exceptions: WAIVERS_FILE's entries, read-only. */
  waivers: { file?: string; fileWaivers: Waiver[] };
  /** HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms): every outbound HTTP request follows them. */
  proxy: ProxySettings;
}

/** The validated environment as the relay's typed configuration. */
function buildConfig(e: Env, built: ConfigParts) {
  const { host, transport, described, routesFile, routes, cwd } = built;
  const dataDir = path.resolve(cwd, e.DATA_DIR);
  const defaultSource = buildDefaultSource(e, cwd);
  return {
    http: {
      host,
      port: e.PORT,
      trustProxy: e.TRUST_PROXY,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    },
    // The default source's path, secrets and allowed addresses are in `sources[0]`; these apply to every source.
    webhook: {
      unsignedFromNetwork: defaultSource.secrets.length === 0 && !isLoopbackHost(host),
      maxBytes: fixed.WEBHOOK_MAX_BYTES,
      rateLimit: { max: e.WEBHOOK_RATE_LIMIT, windowMs: fixed.WEBHOOK_RATE_LIMIT_WINDOW_MS },
    },
    retention: { days: e.RETENTION_DAYS, intervalMs: fixed.RETENTION_INTERVAL_MS },
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
      timeoutMs: fixed.NETBOX_TIMEOUT_MS,
      enrichBudgetMs: fixed.NETBOX_ENRICH_BUDGET_MS,
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
    retry: { maxAttempts: fixed.RETRY_MAX_ATTEMPTS, baseMs: fixed.RETRY_BASE_MS, maxDelayMs: fixed.RETRY_MAX_DELAY_MS },
    worker: {
      pollMs: fixed.WORKER_POLL_MS,
      leaseMs: fixed.LEASE_MS,
      concurrency: described.concurrency(transport.settings),
    },
    log: { level: e.LOG_LEVEL },
    admin: { token: e.ADMIN_TOKEN },
    waivers: built.waivers,
    proxy: built.proxy,
    relayUrl: e.RELAY_URL,
    observe: { metricsToken: e.METRICS_TOKEN },
    secretValues: [
      ...collectSecretValues(e, built.sources),
      ...described.secrets(transport.settings),
      ...[built.proxy.httpProxy, built.proxy.httpsProxy].flatMap(urlPassword),
    ],
  };
}

/**
 * Every secret value in force, so that the logger masks it wherever it appears: the settings the schema
 * flags `secret`, and what is derived from them (DATABASE_URL's password, sources' secrets); the transport adds its own.
 */
function collectSecretValues(e: Env, sources: readonly SourceConfig[]): string[] {
  const declared = SECRET_VARIABLES.map((name) => e[name]).filter((value): value is string => typeof value === 'string');
  return [
    ...declared,
    ...sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
    ...urlPassword(e.DATABASE_URL),
  ];
}

/** A URL's password (DATABASE_URL's, a proxy's), so it reaches no log line even alone. */
function urlPassword(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [password] : [];
  } catch {
    return [];
  }
}

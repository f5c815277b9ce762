import path from 'node:path';
import { buildDefaultRoute, formatRoutesIssue, parseRoutesFile, RoutesFileError, type Condition, type Route } from '../routing';
import { isLoopbackHost } from '../shared';
import { EnvSchema, SECRET_VARIABLES, type Env } from './schema';
import { readSourcesFile, type SourceConfig } from './sources-file';
import { DEFAULT_SOURCE_NAME } from '../webhook';

/** One problem with the configuration, named by its variable. */
export interface ConfigIssue {
  variable: string;
  message: string;
}

/** Thrown by {@link loadConfig} with every problem found, not just the first. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export interface SmtpConfig {
  url: string;
  user?: string;
  password?: string;
  tlsRejectUnauthorized: boolean;
  caFile?: string;
  poolSize: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
}

export interface Config {
  http: {
    host: string;
    port: number;
    trustProxy: boolean | number | string;
    shutdownTimeoutMs: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
  };
  webhook: {
    path: string;
    /** Current secret first, then the previous one during a rotation; empty when unsigned. */
    secrets: string[];
    /**
     * True when deliveries are accepted unsigned from beyond loopback (WEBHOOK_ALLOW_UNSIGNED=true
     * without a secret): warned about at every start and on the dashboard.
     */
    unsignedFromNetwork: boolean;
    maxBytes: number;
    /** CIDR ranges allowed to post; undefined: every address. */
    allowedIps?: string[];
    /** Requests per window per client address; 0: no limit. */
    rateLimit: { max: number; windowMs: number };
  };
  /** Sent deliveries (and their bodies) older than `days` are pruned every `intervalMs`; 0 days: kept. */
  retention: { days: number; intervalMs: number };
  store: {
    dataDir: string;
    sqliteSynchronous: 'FULL' | 'NORMAL' | 'EXTRA';
    /** Set: PostgreSQL shared by replicas (DATABASE_URL). Unset: SQLite under dataDir. */
    databaseUrl?: string;
    databasePoolSize: number;
  };
  /** Absent: mails are written as .eml files under `<dataDir>/mail`. */
  smtp?: SmtpConfig;
  mail: {
    from: string;
    to: string[];
    cc: string[];
    bcc: string[];
    replyTo?: string;
    timezone: string;
    templatesDir?: string;
    /** Where .eml files go when no SMTP server is configured. */
    outboxDir: string;
    /** Failing tests listed in a mail at most ("and N more" links to NetBox). */
    maxFailures: number;
    /** Attach every failing result as CSV, capped at attachMaxBytes. */
    attachCsv: boolean;
    attachMaxBytes: number;
  };
  netbox: {
    url?: string;
    /** A NetBox API token (read access for enrichment, write access for `netbox-setup`); a secret. */
    token?: string;
    caFile?: string;
    tlsRejectUnauthorized: boolean;
    timeoutMs: number;
    /** The whole enrichment of one mail (retries included) ends within this. */
    enrichBudgetMs: number;
  };
  /**
   * The NetBox sources: `default` first (WEBHOOK_PATH, WEBHOOK_SECRET*, WEBHOOK_ALLOWED_IPS, NETBOX_*),
   * then those of SOURCES_FILE, each at `<WEBHOOK_PATH>/<name>`. More than one: mails name their source.
   */
  sources: SourceConfig[];
  /** Ordered routes; without ROUTES_FILE one implicit `default` route to MAIL_TO/CC/BCC. */
  routing: { file?: string; routes: Route[] };
  retry: { maxAttempts: number; baseMs: number; maxDelayMs: number };
  /** `maxUnrecordedOutcomes`: sends whose outcome the store refused, held in memory at most; past it no new claim. */
  worker: { pollMs: number; leaseMs: number; concurrency: number; maxUnrecordedOutcomes: number };
  log: { level: Env['LOG_LEVEL']; format: Env['LOG_FORMAT'] };
  /** /metrics (optionally behind a bearer token) and the periodic SMTP check behind /readyz. */
  observe: { metricsToken?: string; smtpCheckIntervalMs: number };
  /** ADMIN_TOKEN: the dashboard at /ui (and the admin API) are off without it. */
  admin: { token?: string };
  /** EXPECT_REPORT_EVERY in ms; undefined: the watchdog is off. */
  watchdog: { expectEveryMs?: number };
  /** Every secret value, so the logger can mask them wherever they appear. */
  secretValues: string[];
}

export interface LoadConfigOptions {
  /** Reads a `<NAME>_FILE` secret; injected so only the entry point touches the file system. */
  readFile: (file: string) => string;
  /** Base for relative paths (DATA_DIR); default: the current directory. */
  cwd?: string;
}

/** Default recipient when writing .eml files with no MAIL_TO: a newcomer can still open the mail. */
const FILE_MODE_DEFAULT_TO = 'compliance-reports@localhost';

/** How often /readyz's SMTP check reconnects when no send has told us more recently. */
const DEFAULT_SMTP_CHECK_INTERVAL_MS = 5 * 60_000;

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
  const issues = readSecretFiles(env, options.readFile);
  const { values: e, broken, issues: schemaIssues } = parseEnvironment(env);
  issues.push(...schemaIssues);
  const smtp = buildSmtpConfig(e, broken, issues);
  const host = e.HOST ?? (e.WEBHOOK_SECRET !== undefined ? '0.0.0.0' : '127.0.0.1');
  if (!broken.has('HOST') && !broken.has('WEBHOOK_ALLOW_UNSIGNED')) issues.push(...checkWebhookExposure(rawEnv, e, host));
  issues.push(...checkCrossFieldRules(e, broken));
  const routesFile = e.ROUTES_FILE ? path.resolve(options.cwd ?? process.cwd(), e.ROUTES_FILE) : undefined;
  const routes = routesFile ? readRoutes(routesFile, options.readFile, issues) : undefined;
  const cwd = options.cwd ?? process.cwd();
  const sources = e.SOURCES_FILE ? readNamedSources(e, env, { ...options, cwd }, issues) : [];
  issues.push(...checkSourceRules(e, host, sources, routes));
  if (issues.length > 0) throw new ConfigError(issues);
  return buildConfig(e, { host, smtp, routesFile, routes, sources, cwd });
}

/** SOURCES_FILE's sources; their problems are pushed onto `issues`, each naming the source and the field. */
function readNamedSources(
  e: Env,
  env: Record<string, string>,
  options: LoadConfigOptions & { cwd: string },
  issues: ConfigIssue[],
): SourceConfig[] {
  const messages: string[] = [];
  const sources = readSourcesFile(
    {
      file: path.resolve(options.cwd, e.SOURCES_FILE!),
      readFile: options.readFile,
      env,
      webhookPath: normalizeWebhookPath(e.WEBHOOK_PATH),
      cwd: options.cwd,
    },
    messages,
  );
  issues.push(...messages.map((message) => ({ variable: 'SOURCES_FILE', message })));
  return sources;
}

/**
 * A named source beyond loopback needs a webhook secret (as the default does, issue 14), and a route
 * may only name sources that exist: a typo would silently route nothing.
 */
function checkSourceRules(e: Env, host: string, sources: SourceConfig[], routes: Route[] | undefined): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!isLoopbackHost(host) && !e.WEBHOOK_ALLOW_UNSIGNED) {
    for (const s of sources.filter((source) => source.secrets.length === 0)) {
      issues.push({
        variable: 'SOURCES_FILE',
        message: `source ${s.name} webhook_secret_file: is required to listen on HOST=${host}, beyond loopback (or webhook_secret_env)`,
      });
    }
  }
  const known = new Set([DEFAULT_SOURCE_NAME, ...sources.map((s) => s.name)]);
  for (const route of routes ?? []) {
    for (const name of collectSourceNames(route.match)) {
      if (!known.has(name)) {
        issues.push({
          variable: 'ROUTES_FILE',
          message: `route ${route.name} match.source: "${name}" is not a configured source (${[...known].join(', ')})`,
        });
      }
    }
  }
  return issues;
}

/** Every source name a condition mentions, at any depth. */
function collectSourceNames(condition: Condition | undefined): string[] {
  if (!condition) return [];
  return [...(condition.source ?? []), ...[...(condition.all ?? []), ...(condition.any ?? [])].flatMap(collectSourceNames)];
}

function normalizeWebhookPath(value: string): string {
  return value.replace(/\/+$/, '') || '/';
}

/** Replaces each `<NAME>_FILE` by the secret it holds (in `env`); returns what went wrong. */
function readSecretFiles(env: Record<string, string>, readFile: (file: string) => string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const name of SECRET_VARIABLES) {
    const fileVar = `${name}_FILE`;
    if (env[name] !== undefined && env[fileVar] !== undefined) {
      issues.push({ variable: name, message: `set either ${name} or ${fileVar}, not both` });
      continue;
    }
    if (env[fileVar] !== undefined) {
      try {
        // A trailing newline is almost always an editor's, not part of the secret.
        const value = readFile(env[fileVar]).replace(/\r?\n$/, '');
        if (value === '') issues.push({ variable: fileVar, message: `file ${env[fileVar]} is empty` });
        else env[name] = value;
      } catch (error) {
        issues.push({ variable: fileVar, message: `cannot read ${env[fileVar]}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
      }
    }
  }
  return issues;
}

/**
 * The schema stage. Variables the schema refuses are reported and left out (`broken`), and the rest is
 * parsed again without them, so the semantic stage still sees every value that is valid.
 */
function parseEnvironment(env: Record<string, string>): { values: Env; broken: ReadonlySet<string>; issues: ConfigIssue[] } {
  const first = EnvSchema.safeParse(env);
  if (first.success) return { values: first.data, broken: new Set(), issues: [] };
  const issues = first.error.issues.map((issue) => ({
    variable: String(issue.path[0] ?? '(environment)'),
    message: describeIssue(issue, env),
  }));
  const broken = new Set(issues.map((i) => i.variable));
  const rest = Object.fromEntries(Object.entries(env).filter(([key]) => !broken.has(key)));
  // Every field has a default or is optional, so what is left always parses.
  return { values: EnvSchema.parse(rest), broken, issues };
}

/** SMTP settings, or undefined when mails go to .eml files; problems are pushed onto `issues`. */
function buildSmtpConfig(e: Env, broken: ReadonlySet<string>, issues: ConfigIssue[]): SmtpConfig | undefined {
  if (e.SMTP_URL === undefined) {
    for (const v of ['SMTP_USER', 'SMTP_PASSWORD', 'SMTP_CA_FILE'] as const) {
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without SMTP_URL' });
    }
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(e.SMTP_URL);
  } catch {
    issues.push({ variable: 'SMTP_URL', message: 'is not a URL (example: smtp://mail.example.com:587)' });
  }
  if (url && url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    issues.push({ variable: 'SMTP_URL', message: 'must start with smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)' });
  }
  if (url && (url.username || url.password) && (e.SMTP_USER !== undefined || e.SMTP_PASSWORD !== undefined)) {
    issues.push({ variable: 'SMTP_USER', message: 'credentials are already in SMTP_URL; give them in one place only' });
  }
  if (e.SMTP_PASSWORD !== undefined && e.SMTP_USER === undefined && !url?.username && !broken.has('SMTP_USER')) {
    issues.push({ variable: 'SMTP_PASSWORD', message: 'is set but SMTP_USER is not' });
  }
  if ((!e.MAIL_TO || e.MAIL_TO.length === 0) && e.ROUTES_FILE === undefined && !broken.has('MAIL_TO') && !broken.has('ROUTES_FILE')) {
    issues.push({
      variable: 'MAIL_TO',
      message: 'is required when SMTP_URL is set and there is no ROUTES_FILE (comma-separated addresses)',
    });
  }
  return {
    url: e.SMTP_URL,
    user: e.SMTP_USER ?? (url?.username ? decodeURIComponent(url.username) : undefined),
    password: e.SMTP_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined),
    tlsRejectUnauthorized: e.SMTP_TLS_REJECT_UNAUTHORIZED,
    caFile: e.SMTP_CA_FILE,
    poolSize: e.SMTP_POOL_SIZE,
    connectionTimeoutMs: e.SMTP_CONNECTION_TIMEOUT_MS,
    greetingTimeoutMs: e.SMTP_GREETING_TIMEOUT_MS,
    socketTimeoutMs: e.SMTP_SOCKET_TIMEOUT_MS,
  };
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
  const enrichmentOn = e.NETBOX_URL !== undefined && e.NETBOX_TOKEN !== undefined;
  if (enrichmentOn && e.NETBOX_ENRICH_BUDGET_MS >= e.LEASE_MS && valid('NETBOX_ENRICH_BUDGET_MS', 'LEASE_MS')) {
    // A mail still being composed when its lease ends would be claimed and sent twice.
    issues.push({ variable: 'NETBOX_ENRICH_BUDGET_MS', message: `must be below LEASE_MS (${e.LEASE_MS}) when NetBox enrichment is on` });
  }
  if (e.RETRY_BASE_MS > e.RETRY_MAX_DELAY_MS && valid('RETRY_BASE_MS', 'RETRY_MAX_DELAY_MS')) {
    issues.push({ variable: 'RETRY_BASE_MS', message: `must not exceed RETRY_MAX_DELAY_MS (${e.RETRY_MAX_DELAY_MS})` });
  }
  return issues;
}

/** The routes file, parsed; its problems (each with route, field and line) are pushed onto `issues`. */
function readRoutes(routesFile: string, readFile: (file: string) => string, issues: ConfigIssue[]): Route[] | undefined {
  try {
    return parseRoutesFile(readFile(routesFile), routesFile);
  } catch (error) {
    if (error instanceof RoutesFileError) {
      for (const issue of error.issues) issues.push({ variable: 'ROUTES_FILE', message: `${routesFile} ${formatRoutesIssue(issue)}` });
    } else {
      issues.push({
        variable: 'ROUTES_FILE',
        message: `cannot read ${routesFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      });
    }
    return undefined;
  }
}

/** The validated environment as the relay's typed configuration. */
function buildConfig(
  e: Env,
  built: { host: string; smtp?: SmtpConfig; routesFile?: string; routes?: Route[]; sources: SourceConfig[]; cwd: string },
): Config {
  const { host, smtp, routesFile, routes, cwd } = built;
  const dataDir = path.resolve(cwd, e.DATA_DIR);
  const secrets = [e.WEBHOOK_SECRET, e.WEBHOOK_SECRET_PREVIOUS].filter((s): s is string => s !== undefined);
  const defaultSource = buildDefaultSource(e, secrets, cwd);
  return {
    http: {
      host,
      port: e.PORT,
      trustProxy: parseTrustProxy(e.TRUST_PROXY),
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    },
    webhook: {
      path: defaultSource.path,
      secrets,
      unsignedFromNetwork: secrets.length === 0 && !isLoopbackHost(host),
      maxBytes: e.WEBHOOK_MAX_BYTES,
      allowedIps: e.WEBHOOK_ALLOWED_IPS,
      rateLimit: { max: e.WEBHOOK_RATE_LIMIT, windowMs: e.WEBHOOK_RATE_LIMIT_WINDOW_MS },
    },
    retention: { days: e.RETENTION_DAYS, intervalMs: e.RETENTION_INTERVAL_MS },
    store: { dataDir, sqliteSynchronous: e.SQLITE_SYNCHRONOUS, databaseUrl: e.DATABASE_URL, databasePoolSize: e.DATABASE_POOL_SIZE },
    smtp,
    mail: {
      from: e.MAIL_FROM,
      to: e.MAIL_TO && e.MAIL_TO.length > 0 ? e.MAIL_TO : [FILE_MODE_DEFAULT_TO],
      cc: e.MAIL_CC ?? [],
      bcc: e.MAIL_BCC ?? [],
      replyTo: e.MAIL_REPLY_TO,
      timezone: e.MAIL_TIMEZONE,
      templatesDir: e.TEMPLATES_DIR ? path.resolve(cwd, e.TEMPLATES_DIR) : undefined,
      outboxDir: path.join(dataDir, 'mail'),
      maxFailures: e.MAIL_MAX_FAILURES,
      attachCsv: e.MAIL_ATTACH_CSV,
      attachMaxBytes: e.MAIL_ATTACH_MAX_BYTES,
    },
    netbox: {
      ...defaultSource.netbox,
      tlsRejectUnauthorized: e.NETBOX_TLS_REJECT_UNAUTHORIZED,
      timeoutMs: e.NETBOX_TIMEOUT_MS,
      enrichBudgetMs: e.NETBOX_ENRICH_BUDGET_MS,
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
    retry: { maxAttempts: e.RETRY_MAX_ATTEMPTS, baseMs: e.RETRY_BASE_MS, maxDelayMs: e.RETRY_MAX_DELAY_MS },
    worker: {
      pollMs: e.WORKER_POLL_MS,
      leaseMs: e.LEASE_MS,
      concurrency: smtp ? smtp.poolSize : 1,
      maxUnrecordedOutcomes: e.MAX_UNRECORDED_OUTCOMES,
    },
    log: { level: e.LOG_LEVEL, format: e.LOG_FORMAT },
    admin: { token: e.ADMIN_TOKEN },
    watchdog: { expectEveryMs: e.EXPECT_REPORT_EVERY },
    observe: { metricsToken: e.METRICS_TOKEN, smtpCheckIntervalMs: e.SMTP_CHECK_INTERVAL ?? DEFAULT_SMTP_CHECK_INTERVAL_MS },
    secretValues: [
      ...secrets,
      ...(smtp?.password ? [smtp.password] : []),
      ...(e.METRICS_TOKEN ? [e.METRICS_TOKEN] : []),
      ...(e.NETBOX_TOKEN ? [e.NETBOX_TOKEN] : []),
      ...databaseSecrets(e.DATABASE_URL),
      ...(e.ADMIN_TOKEN ? [e.ADMIN_TOKEN] : []),
      ...built.sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
    ],
  };
}

/** The `default` source: the bare WEBHOOK_PATH with WEBHOOK_SECRET*, WEBHOOK_ALLOWED_IPS and NETBOX_*, as before sources existed. */
function buildDefaultSource(e: Env, secrets: string[], cwd: string): SourceConfig {
  return {
    name: DEFAULT_SOURCE_NAME,
    path: normalizeWebhookPath(e.WEBHOOK_PATH),
    secrets,
    allowedIps: e.WEBHOOK_ALLOWED_IPS,
    netbox: {
      url: e.NETBOX_URL?.replace(/\/+$/, ''),
      token: e.NETBOX_TOKEN,
      caFile: e.NETBOX_CA_FILE ? path.resolve(cwd, e.NETBOX_CA_FILE) : undefined,
    },
    tags: {},
    expectEveryMs: e.EXPECT_REPORT_EVERY,
  };
}

/**
 * Issue 14: a relay that takes unsigned deliveries must not do so from the network by accident.
 * A secret that is empty or white space is refused (`WEBHOOK_SECRET=` is not "no secret" here, though
 * other empty values are unset: it is too easily a secret that went missing). Listening beyond
 * loopback needs WEBHOOK_SECRET, or WEBHOOK_ALLOW_UNSIGNED=true to say it is meant.
 */
function checkWebhookExposure(rawEnv: Record<string, string | undefined>, e: Env, host: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const blank = (name: 'WEBHOOK_SECRET' | 'WEBHOOK_SECRET_PREVIOUS') => {
    const value = e[name] ?? rawEnv[name];
    return value !== undefined && value.trim() === '';
  };
  for (const name of ['WEBHOOK_SECRET', 'WEBHOOK_SECRET_PREVIOUS'] as const) {
    if (!blank(name)) continue;
    const variable = e[name] !== undefined && rawEnv[`${name}_FILE`] ? `${name}_FILE` : name;
    issues.push({
      variable,
      message: 'is empty or only white space: give the secret NetBox signs with (openssl rand -hex 32), or remove the variable',
    });
  }
  const signed = e.WEBHOOK_SECRET !== undefined && !blank('WEBHOOK_SECRET');
  // A blank secret is reported above; saying again that one is required would only repeat it.
  if (!signed && !blank('WEBHOOK_SECRET') && !isLoopbackHost(host) && !e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({
      variable: 'WEBHOOK_SECRET',
      message: `is required to listen on HOST=${host}, beyond loopback: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE) to NetBox's webhook secret, listen on 127.0.0.1, or set WEBHOOK_ALLOW_UNSIGNED=true to accept unsigned deliveries from the network knowingly`,
    });
  }
  if (signed && e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({ variable: 'WEBHOOK_ALLOW_UNSIGNED', message: 'has no effect with WEBHOOK_SECRET set: deliveries must be signed' });
  }
  return issues;
}

/** express's `trust proxy`: true/false, a hop count, or a list of addresses/CIDRs. */
function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

function describeIssue(issue: { code: string; message: string; path: PropertyKey[] }, env: Record<string, string>): string {
  const name = String(issue.path[0] ?? '');
  const shown = name in env && !/SECRET|PASSWORD|TOKEN|DATABASE_URL/.test(name) ? ` (got "${env[name]}")` : '';
  return `${issue.message}${shown}`;
}

/** The configuration as it may be logged: secrets replaced, so the boot log can show what is in force. */
export function redactConfig(config: Config): Record<string, unknown> {
  const smtpUrl = config.smtp ? redactUrl(config.smtp.url) : undefined;
  return {
    http: config.http,
    webhook: {
      path: config.webhook.path,
      signed: config.webhook.secrets.length > 0,
      unsignedFromNetwork: config.webhook.unsignedFromNetwork,
      secrets: config.webhook.secrets.length,
      maxBytes: config.webhook.maxBytes,
      allowedIps: config.webhook.allowedIps ?? 'any',
      rateLimit: config.webhook.rateLimit.max > 0 ? config.webhook.rateLimit : 'off',
    },
    retention: config.retention,
    store: { ...config.store, databaseUrl: config.store.databaseUrl ? redactUrl(config.store.databaseUrl) : undefined },
    smtp: config.smtp
      ? { ...config.smtp, url: smtpUrl, password: config.smtp.password ? '[REDACTED]' : undefined }
      : 'none: mails are written as .eml files',
    mail: config.mail,
    netbox: { ...config.netbox, token: config.netbox.token ? '[REDACTED]' : undefined },
    sources: config.sources.map((s) => ({
      ...s,
      secrets: s.secrets.length,
      netbox: { ...s.netbox, token: s.netbox.token ? '[REDACTED]' : undefined },
    })),
    routing: config.routing,
    retry: config.retry,
    worker: config.worker,
    log: config.log,
    admin: { token: config.admin.token ? '[REDACTED]' : undefined },
    watchdog: config.watchdog,
    observe: {
      metricsToken: config.observe.metricsToken ? '[REDACTED]' : undefined,
      smtpCheckIntervalMs: config.observe.smtpCheckIntervalMs,
    },
  };
}

/** The whole DATABASE_URL and its password, so neither reaches a log line. */
function databaseSecrets(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [url, password] : [url];
  } catch {
    return [url];
  }
}

function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = 'REDACTED';
    return url.toString();
  } catch {
    return '[unparseable]';
  }
}

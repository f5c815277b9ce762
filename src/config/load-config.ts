import path from 'node:path';
import { buildDefaultRoute, formatRoutesIssue, parseRoutesFile, RoutesFileError, type Condition, type Route } from '../routing';
import { z } from 'zod';
import { describeShortWebhookSecret, describeZodIssue, isLoopbackHost, type ZodIssueFacts } from '../shared';
import { EnvSchema, SECRET_VARIABLES, type Env } from './schema';
import { buildOAuth2Config, checkEndpointUrl, checkUnusedOAuth2, type OAuth2Config } from './build-oauth2-config';
import type { ConfigIssue } from './config-issue';
import { buildDefaultSource, normalizeWebhookPath, readSourcesFile, type SourceConfig } from './sources-file';
import { checkRetiredSettings, GRAPH_CONCURRENCY, PAUSE_AFTER_4XX_IN_A_ROW } from './retired-settings';
import { readWaiversFile } from './waivers-file';
import type { Waiver } from '../waivers';
import { DEFAULT_SOURCE_NAME } from '../webhook';

export type { ConfigIssue } from './config-issue';
export type { OAuth2Config } from './build-oauth2-config';

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

/** SMTP_URL (and MAIL_TRANSPORT=smtp): pooled SMTP; absent (and no Graph), mails are written as .eml files. */
export type SmtpConfig = OptionalWhenUndefined<NonNullable<ReturnType<typeof buildSmtpConfig>>>;

/** MAIL_TRANSPORT=graph: mails go to Microsoft Graph's sendMail as `sender`, with a token from `oauth2`. */
export type GraphConfig = OptionalWhenUndefined<NonNullable<ReturnType<typeof buildGraphConfig>>>;

/** A built object's type as callers write one (tests, tools): a field that may be undefined may be left out. */
type OptionalWhenUndefined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: T[K];
};

export interface LoadConfigOptions {
  /** Reads a `<NAME>_FILE` secret; injected so only the entry point touches the file system. */
  readFile: (file: string) => string;
  /** Base for relative paths (DATA_DIR); default: the current directory. */
  cwd?: string;
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
  const issues = readSecretFiles(env, options.readFile);
  const { values: e, broken, issues: schemaIssues } = parseEnvironment(env);
  issues.push(...schemaIssues);
  const smtp = buildSmtpConfig(e, broken, issues, options.readFile);
  const graph = buildGraphConfig(e, broken, issues, options.readFile);
  const oauth2InUse = (e.SMTP_AUTH === 'oauth2' && e.SMTP_URL !== undefined) || e.MAIL_TRANSPORT === 'graph';
  if (!oauth2InUse && !broken.has('SMTP_AUTH') && !broken.has('MAIL_TRANSPORT')) issues.push(...checkUnusedOAuth2(e));
  const host = e.HOST ?? (e.WEBHOOK_SECRET !== undefined ? '0.0.0.0' : '127.0.0.1');
  if (!broken.has('HOST') && !broken.has('WEBHOOK_ALLOW_UNSIGNED')) issues.push(...checkWebhookExposure(rawEnv, e, host));
  issues.push(...checkCrossFieldRules(e, broken));
  const routesFile = e.ROUTES_FILE ? path.resolve(options.cwd ?? process.cwd(), e.ROUTES_FILE) : undefined;
  const routes = routesFile ? readRoutes(routesFile, options.readFile, issues) : undefined;
  const cwd = options.cwd ?? process.cwd();
  const sources = e.SOURCES_FILE ? readNamedSources(e, env, { ...options, cwd }, issues) : [];
  issues.push(...checkSourceRules(e, host, sources, routes));
  const waivers = readWaivers(e, { ...options, cwd }, sources, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return { ...buildConfig(e, { host, smtp, graph, routesFile, routes, sources, cwd, waivers }), warnings: checkRetiredSettings(env) };
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
      catchUp: { everyMs: e.CATCH_UP_EVERY, max: e.CATCH_UP_MAX },
    },
    messages,
  );
  issues.push(...messages.map((message) => ({ variable: 'SOURCES_FILE', message })));
  return sources;
}

/** Accepted exceptions: WAIVERS_FILE's entries (read-only) and how far ahead any waiver may run (WAIVER_MAX_DAYS). */
interface WaiversConfig {
  file?: string;
  maxDays: number;
  fileWaivers: Waiver[];
}

/** WAIVER_MAX_DAYS and WAIVERS_FILE's entries, each checked against the configured sources; problems go onto `issues`. */
function readWaivers(e: Env, options: LoadConfigOptions & { cwd: string }, sources: SourceConfig[], issues: ConfigIssue[]): WaiversConfig {
  if (!e.WAIVERS_FILE) return { maxDays: e.WAIVER_MAX_DAYS, fileWaivers: [] };
  const file = path.resolve(options.cwd, e.WAIVERS_FILE);
  const messages: string[] = [];
  const context = {
    file,
    readFile: options.readFile,
    maxDays: e.WAIVER_MAX_DAYS,
    sources: [DEFAULT_SOURCE_NAME, ...sources.map((s) => s.name)],
  };
  const fileWaivers = readWaiversFile(context, messages);
  issues.push(...messages.map((message) => ({ variable: 'WAIVERS_FILE', message })));
  return { file, maxDays: e.WAIVER_MAX_DAYS, fileWaivers };
}

/**
 * A named source beyond loopback needs a webhook secret (as the default does), and a route
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
  // Owners come from NetBox: without any NetBox to ask, every report would go whole to the fallback.
  const canAskNetbox = (e.NETBOX_URL !== undefined && e.NETBOX_TOKEN !== undefined) || sources.some((s) => s.netbox.url && s.netbox.token);
  for (const route of (routes ?? []).filter((r) => r.owners !== undefined && !canAskNetbox)) {
    issues.push({
      variable: 'ROUTES_FILE',
      message: `route ${route.name} to.netbox_contacts: needs NETBOX_URL and NETBOX_TOKEN (or a source with netbox_url and a token) to read who owns what`,
    });
  }
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
 * The environment is parsed once per process: without zod's eval fast path, which compiles a parser
 * for each object schema at its first parse and pays only over many parses (a tenth of
 * `check-config`'s time went to it). Same result, same issues.
 */
const ONE_PARSE = { jitless: true } as const;

/**
 * The schema stage. Variables the schema refuses are reported and left out (`broken`), and the rest is
 * parsed again without them, so the semantic stage still sees every value that is valid.
 */
function parseEnvironment(env: Record<string, string>): { values: Env; broken: ReadonlySet<string>; issues: ConfigIssue[] } {
  const first = EnvSchema.safeParse(env, ONE_PARSE);
  if (first.success) return { values: first.data, broken: new Set(), issues: [] };
  const issues = first.error.issues.map((issue) => ({
    variable: String(issue.path[0] ?? '(environment)'),
    message: describeIssue(issue, env),
  }));
  const broken = new Set(issues.map((i) => i.variable));
  const rest = Object.fromEntries(Object.entries(env).filter(([key]) => !broken.has(key)));
  // Every field has a default or is optional, so what is left always parses.
  return { values: EnvSchema.parse(rest, ONE_PARSE), broken, issues };
}

/** SMTP settings, or undefined when mails go to .eml files (or Graph); problems are pushed onto `issues`. */
function buildSmtpConfig(e: Env, broken: ReadonlySet<string>, issues: ConfigIssue[], readFile: (file: string) => string) {
  if (e.SMTP_URL === undefined || e.MAIL_TRANSPORT === 'graph') {
    if (e.SMTP_URL !== undefined)
      issues.push({
        variable: 'SMTP_URL',
        message: 'has no effect with MAIL_TRANSPORT=graph (mail goes through Microsoft Graph): unset one of them',
      });
    for (const v of ['SMTP_USER', 'SMTP_PASSWORD', 'SMTP_CA_FILE'] as const) {
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without SMTP_URL' });
    }
    if (e.SMTP_AUTH === 'oauth2' && e.SMTP_URL === undefined)
      issues.push({
        variable: 'SMTP_AUTH',
        message: 'oauth2 needs SMTP_URL (the server to log in to, e.g. smtp://smtp.office365.com:587)',
      });
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
  checkRecipientsRequired(e, broken, 'SMTP_URL is set', issues);
  const user = e.SMTP_USER ?? (url?.username ? decodeURIComponent(url.username) : undefined);
  const password = e.SMTP_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined);
  return {
    url: e.SMTP_URL,
    user,
    password,
    tlsRejectUnauthorized: e.SMTP_TLS_REJECT_UNAUTHORIZED,
    caFile: e.SMTP_CA_FILE,
    poolSize: e.SMTP_POOL_SIZE,
    connectionTimeoutMs: e.SMTP_CONNECTION_TIMEOUT_MS,
    greetingTimeoutMs: e.SMTP_GREETING_TIMEOUT_MS,
    socketTimeoutMs: e.SMTP_SOCKET_TIMEOUT_MS,
    oauth2: e.SMTP_AUTH === 'oauth2' ? buildSmtpOAuth2(e, { user, password }, readFile, issues) : undefined,
  };
}

/** SMTP_AUTH=oauth2: the mailbox is required, a password refused (the login is a token). */
function buildSmtpOAuth2(
  e: Env,
  login: { user?: string; password?: string },
  readFile: (file: string) => string,
  issues: ConfigIssue[],
): OAuth2Config | undefined {
  if (login.password !== undefined)
    issues.push({ variable: 'SMTP_PASSWORD', message: 'has no effect with SMTP_AUTH=oauth2 (the login is an access token): remove it' });
  if (login.user === undefined)
    issues.push({
      variable: 'SMTP_USER',
      message: 'is required with SMTP_AUTH=oauth2: the mailbox to log in as (with Google, the one the service account acts as)',
    });
  return buildOAuth2Config(e, { kind: 'smtp', user: login.user }, readFile, issues);
}

/** MAIL_TRANSPORT=graph: the sender mailbox (default MAIL_FROM's address), Graph's URL and the app's credentials. */
function buildGraphConfig(e: Env, broken: ReadonlySet<string>, issues: ConfigIssue[], readFile: (file: string) => string) {
  if (e.MAIL_TRANSPORT !== 'graph') {
    if (e.GRAPH_SENDER !== undefined) issues.push({ variable: 'GRAPH_SENDER', message: 'has no effect without MAIL_TRANSPORT=graph' });
    return undefined;
  }
  checkRecipientsRequired(e, broken, 'MAIL_TRANSPORT=graph', issues);
  checkEndpointUrl('GRAPH_URL', e.GRAPH_URL, issues);
  const oauth2 = buildOAuth2Config(e, { kind: 'graph' }, readFile, issues);
  if (!oauth2) return undefined;
  return {
    url: e.GRAPH_URL.replace(/\/+$/, ''),
    sender: mailboxAddress(e.GRAPH_SENDER ?? e.MAIL_FROM),
    timeoutMs: e.GRAPH_TIMEOUT_MS,
    concurrency: GRAPH_CONCURRENCY,
    oauth2,
  };
}

/** `Name <user@domain>` → `user@domain`. */
function mailboxAddress(mailbox: string): string {
  return /<([^<>\s]+)>\s*$/.exec(mailbox)?.[1] ?? mailbox.trim();
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

/** What loadConfig has read and checked before the configuration is assembled. */
interface ConfigParts {
  host: string;
  smtp?: SmtpConfig;
  graph?: GraphConfig;
  routesFile?: string;
  routes?: Route[];
  sources: SourceConfig[];
  cwd: string;
  waivers: WaiversConfig;
}

/** The validated environment as the relay's typed configuration. */
function buildConfig(e: Env, built: ConfigParts) {
  const { host, smtp, graph, routesFile, routes, cwd } = built;
  const dataDir = path.resolve(cwd, e.DATA_DIR);
  const defaultSource = buildDefaultSource(e, { webhookPath: normalizeWebhookPath(e.WEBHOOK_PATH), cwd });
  const secrets = defaultSource.secrets;
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
      allowedIps: defaultSource.allowedIps,
      rateLimit: { max: e.WEBHOOK_RATE_LIMIT, windowMs: e.WEBHOOK_RATE_LIMIT_WINDOW_MS },
    },
    retention: { days: e.RETENTION_DAYS, intervalMs: e.RETENTION_INTERVAL_MS },
    store: { dataDir, sqliteSynchronous: e.SQLITE_SYNCHRONOUS, databaseUrl: e.DATABASE_URL, databasePoolSize: e.DATABASE_POOL_SIZE },
    smtp,
    graph,
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
      chartReports: e.MAIL_CHART_REPORTS,
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
      concurrency: graph ? graph.concurrency : smtp ? smtp.poolSize : 1,
      pauseAfter4xx: PAUSE_AFTER_4XX_IN_A_ROW,
    },
    // `auto` (LOG_FORMAT unset): pretty when stdout is a terminal, JSON otherwise.
    log: { level: e.LOG_LEVEL, format: e.LOG_FORMAT ?? ('auto' as const) },
    admin: { token: e.ADMIN_TOKEN },
    watchdog: { expectEveryMs: defaultSource.expectEveryMs },
    waivers: built.waivers,
    relayUrl: e.RELAY_URL,
    observe: { metricsToken: e.METRICS_TOKEN, smtpCheckIntervalMs: e.SMTP_CHECK_INTERVAL },
    secretValues: collectSecretValues(e, smtp ?? graph, built.sources),
  };
}

/**
 * A relay that takes unsigned deliveries must not do so from the network by accident.
 * A secret that is empty or white space is refused (`WEBHOOK_SECRET=` is not "no secret" here, though
 * other empty values are unset: it is too easily a secret that went missing), and so is one shorter than
 * 16 characters (the README's placeholder, a test value). The previous secret of a rotation is
 * accepted as it is: it is the one being retired. Listening beyond
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
  const short = e.WEBHOOK_SECRET !== undefined && !blank('WEBHOOK_SECRET') ? describeShortWebhookSecret(e.WEBHOOK_SECRET) : undefined;
  if (short) issues.push({ variable: rawEnv.WEBHOOK_SECRET_FILE ? 'WEBHOOK_SECRET_FILE' : 'WEBHOOK_SECRET', message: short });
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

function describeIssue(issue: ZodIssueFacts & { path: PropertyKey[] }, env: Record<string, string>): string {
  const name = String(issue.path[0] ?? '');
  const shown = name in env && !/SECRET|PASSWORD|TOKEN|DATABASE_URL/.test(name) ? ` (got "${env[name]}")` : '';
  return `${describeNumberRange(name, issue) ?? describeZodIssue(issue)}${shown}`;
}

/**
 * A numeric variable's whole allowed range, whichever bound or type the value missed: "must be a whole
 * number from 0 to 65535" tells the user what to write in one reading.
 */
function describeNumberRange(name: string, issue: ZodIssueFacts): string | undefined {
  if (!['invalid_type', 'too_big', 'too_small'].includes(issue.code ?? '')) return undefined;
  let field: unknown = EnvSchema.shape[name as keyof Env];
  while (field instanceof z.ZodDefault || field instanceof z.ZodOptional) field = field.unwrap();
  if (!(field instanceof z.ZodNumber)) return undefined;
  const kind = field.isInt ? 'a whole number' : 'a number';
  const { minValue: min, maxValue: max } = field;
  const upper = max !== null && max < Number.MAX_SAFE_INTEGER ? max : undefined;
  if (min !== null && upper !== undefined) return `must be ${kind} from ${min} to ${upper}`;
  return min !== null ? `must be ${kind}, at least ${min}` : `must be ${kind}`;
}

/**
 * Every secret value in force, so that the logger masks it wherever it appears: the settings the schema
 * flags `secret`, and what is derived from them or read from files (passwords in URLs, keys, sources' secrets).
 */
function collectSecretValues(
  e: Env,
  mail: { password?: string; oauth2?: OAuth2Config } | undefined,
  sources: readonly SourceConfig[],
): string[] {
  const declared = SECRET_VARIABLES.map((name) => e[name]).filter((value): value is string => typeof value === 'string');
  return [
    ...declared,
    ...sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
    ...(mail && 'password' in mail && mail.password ? [mail.password] : []),
    ...oauth2Secrets(mail?.oauth2),
    ...databasePassword(e.DATABASE_URL),
  ];
}

/** The client secret and the private key (and each line of the key, in case a log line holds one). */
function oauth2Secrets(oauth2: OAuth2Config | undefined): string[] {
  if (!oauth2) return [];
  const key = oauth2.privateKeyPem ? [oauth2.privateKeyPem, ...keyLines(oauth2.privateKeyPem)] : [];
  return [...(oauth2.clientSecret ? [oauth2.clientSecret] : []), ...key];
}

function keyLines(pem: string): string[] {
  return pem.split(/\r?\n/).filter((line) => line.length >= 16 && !line.startsWith('-----'));
}

/** DATABASE_URL's password, so it reaches no log line even alone. */
function databasePassword(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [password] : [];
  } catch {
    return [];
  }
}

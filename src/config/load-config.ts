import path from 'node:path';
import { unescape } from 'node:querystring';
import { buildDefaultRoute, parseRoutesFile, readYamlListFile } from '../routing';
import { isLoopbackHost, readProxySettings, type ConfigIssue } from '../shared';
import { configureTransport, findTransport, TRANSPORTS, type TransportDescriptor } from '../notify';
import { buildSettingsSchema, listSettingLeaves } from './schema';
import { checkCrossFieldRules, checkSources, checkWebhookExposure } from './check-rules';
import * as fixed from './fixed-limits';
import { parseSettings, readSecretFiles } from './parse-environment';
import { readSources } from './sources-file';
import { RETIRED_SETTINGS } from './retired-settings';
import { readWaiversFile } from './waivers-file';

/** Thrown by {@link loadConfig} with every problem found, not just the first. */
export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The settings as the schema nests them, with what is derived from them and the fixed limits a test shortens. */
export type Config = ReturnType<typeof loadConfig>;

export interface LoadConfigOptions {
  /** Reads a `<NAME>_FILE` secret; injected so only the entry point touches the file system. */
  readFile: (file: string) => string;
  /** Base for relative paths (DATA_DIR); default: the current directory. */
  cwd?: string;
  /** The transports mails may go through, whose settings sections join the schema; absent: notify's TRANSPORTS. */
  transports?: readonly TransportDescriptor[];
}

/** Default recipient when writing .eml files with no MAIL_TO: a newcomer can still open the mail. */
export const FILE_MODE_DEFAULT_TO = 'compliance-reports@localhost';

/** Validates the environment at boot, empty values unset (compose's `${VAR:-}`); {@link ConfigError} lists every problem. */
export function loadConfig(rawEnv: Record<string, string | undefined>, options: LoadConfigOptions) {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(rawEnv)) if (value !== undefined && value !== '') env[name] = value;
  const { readFile, cwd = process.cwd(), transports = TRANSPORTS } = options;
  const schema = buildSettingsSchema(transports);
  const leaves = listSettingLeaves(schema);
  const issues = readSecretFiles(env, readFile, leaves);
  const { values: s, flat, broken, issues: schemaIssues } = parseSettings(env, schema, leaves);
  issues.push(...schemaIssues);
  const dataDir = path.resolve(cwd, s.store.dataDir);
  const outboxDir = path.join(dataDir, 'mail');
  const requireRecipients = (when: string) => {
    if (!s.recipients.to?.length && s.routing.file === undefined && !broken.has('MAIL_TO') && !broken.has('ROUTES_FILE'))
      issues.push({ variable: 'MAIL_TO', message: `is required when ${when} and there is no ROUTES_FILE (comma-separated addresses)` });
  };
  const transport = configureTransport(flat, { issues, broken, readFile, rawEnv: env, outboxDir, requireRecipients }, transports);
  const host = s.http.host ?? (s.source.webhook_secret !== undefined ? '0.0.0.0' : '127.0.0.1');
  if (!broken.has('HOST') && !broken.has('WEBHOOK_ALLOW_UNSIGNED')) checkWebhookExposure(issues, rawEnv, s, host);
  checkCrossFieldRules(issues, s, broken);
  const reportAs = (variable: string) => (message: string) => issues.push({ variable, message });
  const routesFile = s.routing.file ? path.resolve(cwd, s.routing.file) : undefined;
  const routes = routesFile ? readYamlListFile(routesFile, readFile, parseRoutesFile, reportAs('ROUTES_FILE')) : undefined;
  const warnings: ConfigIssue[] = Object.entries(RETIRED_SETTINGS)
    .filter(([name]) => env[name] !== undefined)
    .map(([variable, message]) => ({ variable, message }));
  const sources = readSources(s, { readFile, env, cwd }, issues, warnings);
  checkSources(issues, s, host, sources, routes, readFile);
  const waiversFile = s.waivers.file ? path.resolve(cwd, s.waivers.file) : undefined;
  const context = { file: waiversFile!, readFile, sources: sources.map((source) => source.name) };
  const fileWaivers = waiversFile ? readWaiversFile(context, reportAs('WAIVERS_FILE')) : [];
  const proxy = readProxySettings(env, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  const described = findTransport(transport, transports);
  const { source: _source, recipients, sourcesFile: _sourcesFile, ...settings } = s;
  return {
    ...settings,
    http: { ...s.http, host },
    // The default source's path, secrets and allowed addresses are in `sources[0]`; these apply to every source.
    webhook: {
      ...s.webhook,
      unsignedFromNetwork: sources[0].secrets.length === 0 && !isLoopbackHost(host),
      maxBytes: fixed.WEBHOOK_MAX_BYTES,
    },
    retention: { ...s.retention, intervalMs: fixed.RETENTION_INTERVAL_MS },
    store: { ...s.store, dataDir },
    transport,
    mail: { ...s.mail, templatesDir: s.mail.templatesDir ? path.resolve(cwd, s.mail.templatesDir) : undefined, outboxDir },
    // The default source's URL, token and CA are in `sources[0].netbox`; these apply to every source.
    netbox: { timeoutMs: fixed.NETBOX_TIMEOUT_MS, enrichBudgetMs: fixed.NETBOX_ENRICH_BUDGET_MS },
    sources,
    routing: {
      file: routesFile,
      routes: routes ?? [
        buildDefaultRoute({
          to: recipients.to?.length ? recipients.to : [FILE_MODE_DEFAULT_TO],
          cc: recipients.cc ?? [],
          bcc: recipients.bcc ?? [],
        }),
      ],
    },
    retry: { maxAttempts: fixed.RETRY_MAX_ATTEMPTS, baseMs: fixed.RETRY_BASE_MS, maxDelayMs: fixed.RETRY_MAX_DELAY_MS },
    worker: { pollMs: fixed.WORKER_POLL_MS, leaseMs: fixed.LEASE_MS, concurrency: described.concurrency(transport.settings) },
    waivers: { file: waiversFile, fileWaivers },
    proxy,
    /** Every secret value in force, so that the logger masks it wherever it appears. */
    secretValues: [
      ...leaves.flatMap(({ name, meta }) => (meta.secret && typeof flat[name] === 'string' ? [flat[name]] : [])),
      ...sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
      ...described.secrets(transport.settings),
      // A URL's password reaches no log line even alone.
      ...[s.store.databaseUrl, proxy.httpProxy, proxy.httpsProxy].flatMap((url) => {
        const password = url && URL.canParse(url) && new URL(url).password;
        return password ? [unescape(password)] : []; // decodeURIComponent, but never throws
      }),
    ],
    /** Variables still set that the relay no longer reads, each naming what replaced it: said by check-config and at start. */
    warnings,
  };
}

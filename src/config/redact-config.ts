import { describeCatchUp, planCatchUp } from './sources-file';
import { findTransport, TRANSPORTS, type TransportDescriptor } from '../notify';
import { SECRET_MARK as REDACTED } from '../shared';
import type { Config } from './load-config';

/** The configuration as it may be logged: only what is in force, every value of `Config.secretValues` redacted wherever it sits. */
export function redactConfig(config: Config, transports: readonly TransportDescriptor[] = TRANSPORTS): Record<string, unknown> {
  const secrets = new Set(config.secretValues);
  const transport = findTransport(config.transport, transports).describeConfig(config.transport.settings);
  const { outboxDir, ...mail } = config.mail;
  const { dataDir, sqliteSynchronous, databaseUrl } = config.store;
  const shown = {
    http: config.http,
    webhook: {
      ...config.webhook,
      path: config.sources[0].path,
      signed: config.sources[0].secrets.length > 0,
      allowedIps: config.sources[0].allowedIps ?? 'any',
      rateLimit: config.webhook.rateLimit > 0 ? `${config.webhook.rateLimit} per minute per address` : 'off',
    },
    retention: config.retention,
    // Only what is in force: SQLite's settings mean nothing with DATABASE_URL, and the reverse.
    store: databaseUrl ? { kind: 'postgres', databaseUrl } : { kind: 'sqlite', dataDir, sqliteSynchronous },
    ...transport,
    // The outbox directory only without a mail server; MAIL_TO/CC/BCC are the default route's (under routing).
    mail: { ...mail, ...(typeof transport.smtp === 'string' ? { outboxDir } : {}) },
    netbox: describeNetbox(config.netbox, config.sources[0].netbox),
    sources: config.sources.map((s) => ({ ...s, catchUp: describeCatchUp(planCatchUp(s)) })),
    routing: config.routing,
    retry: config.retry,
    worker: config.worker,
    log: config.log,
    admin: config.admin.token ? config.admin : 'off: ADMIN_TOKEN is not set (no dashboard, no admin API)',
    // The default source's cadence (each source's own is shown with it).
    watchdog: config.sources[0].expectEveryMs ? { expectEveryMs: config.sources[0].expectEveryMs } : 'off: EXPECT_REPORT_EVERY is not set',
    waivers: { file: config.waivers.file ?? 'none', fileWaivers: config.waivers.fileWaivers.length },
    relayUrl: config.relayUrl ?? 'none: mails carry no "Accept as an exception" links',
    proxy: config.proxy,
    observe: config.observe,
  };
  return maskSecrets(shown, secrets) as Record<string, unknown>;
}

/** NetBox's settings in force: none without NETBOX_URL; no enrichment timings without a token (nothing is fetched). */
function describeNetbox(shared: Config['netbox'], netbox: Config['sources'][number]['netbox']): unknown {
  if (!netbox.url) return 'off: NETBOX_URL is not set (mail links are relative, no failing tests)';
  return netbox.token ? { ...netbox, ...shared } : { ...netbox, token: 'not set: mails list no failing tests' };
}

/** A copy with each secret [REDACTED], a URL's password REDACTED, and a PEM block only said to be set. */
function maskSecrets(value: unknown, secrets: ReadonlySet<string>): unknown {
  if (typeof value === 'string') {
    const shown = redactUrlPassword(value);
    if (shown !== value) return shown;
    if (secrets.has(value)) return REDACTED;
    // A certificate is public, but its base64 tells a reader nothing.
    return value.startsWith('-----BEGIN ') ? 'set (PEM, not shown)' : value;
  }
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, secrets));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSecrets(item, secrets)]));
}

/** SMTP_URL and the like may carry a password in their user part: REDACTED, or the whole value when it is no URL. */
export function redactUrlPassword(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(value)) return value;
  if (!URL.canParse(value)) return REDACTED;
  const url = new URL(value);
  url.password = 'REDACTED';
  return url.toString();
}

/** What an unsigned webhook means here (logged at start, shown on the dashboard), or undefined when deliveries must be signed. */
export function describeUnsignedWebhook(config: Pick<Config, 'http' | 'webhook' | 'sources'>): string | undefined {
  if (config.sources[0].secrets.length > 0) return undefined;
  if (config.webhook.unsignedFromNetwork) {
    return `WEBHOOK_ALLOW_UNSIGNED=true: deliveries are accepted WITHOUT a signature from anyone who can reach ${config.http.host}:${config.http.port}. Set WEBHOOK_SECRET on the NetBox webhook and here.`;
  }
  return `WEBHOOK_SECRET is not set: deliveries are accepted WITHOUT a signature check, on ${config.http.host} (loopback) only. Set WEBHOOK_SECRET on the NetBox webhook and here to listen on the network.`;
}

/** What an operator should know about this configuration at start, each said once: a log line's fields and message. */
export function listBootWarnings(config: Config, transports: readonly TransportDescriptor[] = TRANSPORTS) {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const unsigned = describeUnsignedWebhook(config);
  if (unsigned) warnings.push({ fields: { host: config.http.host }, message: unsigned });
  for (const w of config.warnings) warnings.push({ fields: { variable: w.variable }, message: `${w.variable} ${w.message}` });
  if (!config.sources[0].netbox.url) warnings.push({ fields: {}, message: 'NETBOX_URL is not set: links in mails will be relative paths' });
  warnings.push(...findTransport(config.transport, transports).describeStartWarnings(config.transport.settings));
  return warnings;
}

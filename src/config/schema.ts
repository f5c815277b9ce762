import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { buildTransportSettings, TRANSPORTS, type TransportDescriptor } from '../notify';
import { isTimeZone } from '../routing';
import {
  address,
  addressList,
  bool,
  cidrList,
  duration,
  httpUrl,
  nonNegativeInt,
  parseDurationMs,
  positiveInt,
  setting,
  type SettingMeta,
} from '../shared';

/** The longest delay a Node timer keeps: a longer one fires after 1 ms instead (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration, or `off` (null): how often the catch-up asks NetBox; SOURCES_FILE's `catch_up_every` reads the same. */
export const catchUpEvery = z
  .string()
  .trim()
  .transform((value, ctx): number | null => {
    if (value.toLowerCase() === 'off') return null;
    const ms = parseDurationMs(value);
    if (ms !== undefined && ms <= MAX_TIMER_MS) return ms;
    ctx.addIssue({
      code: 'custom',
      message:
        ms === undefined
          ? 'is not a duration (examples: 5m, 1h) nor off'
          : 'is longer than 24d, the longest interval the relay keeps: give 24d or less, or off',
    });
    return z.NEVER;
  });

/** express's `trust proxy`, checked by proxy-addr (as express does) so a bad value is refused with the rest of the configuration. */
const trustProxy = z
  .string()
  .trim()
  .transform((value, ctx): boolean | number | string[] => {
    if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
    if (/^\d+$/.test(value)) return Number(value);
    const proxies = value.split(',').map((item) => item.trim());
    try {
      proxyAddr.compile(proxies);
      return proxies;
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `${(error as Error).message}; it accepts true, false, a hop count (1), or comma-separated proxy addresses, CIDR ranges and the names loopback, linklocal, uniquelocal`,
      });
      return z.NEVER;
    }
  });

/** A setting: the environment variable `name` read into the field it sits in, with its docs (group, description). */
function env<T extends z.ZodType>(name: string, schema: T, meta: Omit<SettingMeta, 'env'>): T {
  return setting(schema, { ...meta, env: name });
}

/** A schema of settings: {@link SettingsSchema}, or it with further transports' sections. */
export type AnySettingsSchema = z.ZodObject<z.ZodRawShape>;

/** One environment variable of a settings schema: where its value goes in the parsed settings, its field and its docs. */
export interface SettingLeaf {
  name: string;
  path: string[];
  schema: z.ZodType;
  meta: SettingMeta;
}

/** Every variable of `schema`, in its order: a field with a setting's docs is one (named by `env`, else by its key), an object a section. */
export function listSettingLeaves(schema: AnySettingsSchema, path: string[] = []): SettingLeaf[] {
  return Object.entries(schema.shape).flatMap(([key, field]) => {
    const meta = (field as z.ZodType).meta() as SettingMeta | undefined;
    if (meta?.group === undefined) return listSettingLeaves(field as AnySettingsSchema, [...path, key]);
    return [{ name: meta.env ?? key, path: [...path, key], schema: field as z.ZodType, meta }];
  });
}

/** The relay's one schema with the sections of `transports` (a test may give more), parsed and documented like the rest. */
export function buildSettingsSchema(transports: readonly TransportDescriptor[] = TRANSPORTS): AnySettingsSchema {
  return SettingsSchema.extend({ transport: z.object(buildTransportSettings(transports)) });
}

/** Every variable the relay reads, in the field it sets, with its docs (the reference, .env.example, `check-config`). */
export const SettingsSchema = z.object({
  http: z.object({
    // No default here: loadConfig picks 127.0.0.1 without a webhook secret, 0.0.0.0 with one.
    host: env('HOST', z.string().trim().min(1).max(253).optional(), {
      group: 'basics',
      description:
        'Address to listen on (0.0.0.0 or :: for all); a name is resolved before start. Beyond loopback the relay needs WEBHOOK_SECRET (or WEBHOOK_ALLOW_UNSIGNED=true).',
      allowedText: 'an IP address of this machine, a host name that resolves to one',
      defaultText: '127.0.0.1 without WEBHOOK_SECRET, 0.0.0.0 with it',
      example: '0.0.0.0',
    }),
    port: env('PORT', nonNegativeInt(8080, 65535), { group: 'basics', description: 'Port to listen on.' }),
    trustProxy: env('TRUST_PROXY', trustProxy.prefault('false'), {
      group: 'basics',
      description: 'Behind a reverse proxy, whose X-Forwarded-For to believe (express "trust proxy"), e.g. loopback, 10.0.0.0/8.',
      allowedText: '`true`, `false`, a hop count, comma-separated addresses, CIDR ranges and `loopback`, `linklocal`, `uniquelocal`',
    }),
    shutdownTimeoutMs: env('SHUTDOWN_TIMEOUT_MS', positiveInt(10_000, MAX_TIMER_MS), {
      group: 'advanced',
      description:
        "On SIGTERM, how long sends in flight and requests under way may finish, together (unfinished sends are resent at the next start): keep it below the orchestrator's grace period (Kubernetes: terminationGracePeriodSeconds, 30 s by default).",
    }),
  }),
  webhook: z.object({
    path: env(
      'WEBHOOK_PATH',
      z
        .string()
        .trim()
        .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must be a path starting with /')
        .default('/webhook')
        // Without its trailing slashes (`/` stays `/`).
        .transform((value) => value.replace(/\/+$/, '') || '/'),
      { group: 'basics', description: 'Path of the webhook NetBox posts to (a trailing slash is accepted).' },
    ),
    allowUnsigned: env('WEBHOOK_ALLOW_UNSIGNED', bool(false), {
      group: 'basics',
      description: 'true: listen beyond loopback without WEBHOOK_SECRET; anyone who reaches the port can queue mail.',
    }),
    rateLimit: env('WEBHOOK_RATE_LIMIT', nonNegativeInt(0), {
      group: 'features',
      description: 'Webhook requests per client address per minute, counted on each webhook path (429 beyond it); 0: no limit.',
    }),
  }),
  // The default source (SOURCES_FILE adds named ones), in the fields of a SOURCES_FILE entry: one builder makes both.
  source: z.object({
    webhook_secret: env('WEBHOOK_SECRET', z.string().max(255).optional(), {
      secret: true,
      group: 'basics',
      description:
        "The NetBox webhook's secret, at least 16 characters (generate one: openssl rand -hex 32): X-Hook-Signature must match. Empty is an error.",
    }),
    webhook_secret_previous: env('WEBHOOK_SECRET_PREVIOUS', z.string().max(255).optional(), {
      secret: true,
      group: 'basics',
      description: 'During a rotation, the old secret, accepted too.',
    }),
    allowed_ips: env('WEBHOOK_ALLOWED_IPS', cidrList.optional(), {
      group: 'features',
      description: 'Comma-separated addresses and CIDR ranges allowed to post (others get 403); unset: any.',
      example: '10.0.0.0/8, 2001:db8::/32',
    }),
    netbox_url: env('NETBOX_URL', httpUrl.optional(), {
      group: 'basics',
      description:
        "NetBox's base URL, with its base path: mails link into NetBox; with NETBOX_TOKEN they also list the failing results, missed reports are fetched (CATCH_UP_EVERY) and routes may mail device owners. Unset: none of these; mails show NetBox's paths as plain text.",
      example: 'https://netbox.example.com',
    }),
    // A header value: printable ASCII only, so a stray newline cannot add a header.
    token: env(
      'NETBOX_TOKEN',
      z
        .string()
        .trim()
        .max(500)
        .regex(/^[\x21-\x7e]+$/, 'must be one token without spaces (nbt_<key>.<token> or a 40-character key)')
        .optional(),
      {
        secret: true,
        group: 'basics',
        description:
          'NetBox API token, read-only (netbox-setup alone needs a write-enabled one); with NETBOX_URL it turns on the failing results, the catch-up and routes by owner.',
      },
    ),
    ca_file: env('NETBOX_CA_FILE', z.string().trim().optional(), {
      group: 'features',
      description: "PEM file with the CA that signed NetBox's certificate (private CA or self-signed): the certificate is always verified.",
    }),
    expect_report_every: env('EXPECT_REPORT_EVERY', duration.optional(), {
      group: 'features',
      description: 'A duration with its unit (24h, 7d): with no report for that long, mail the recipients once (the watchdog).',
      example: '24h',
    }),
    catch_up_every: env('CATCH_UP_EVERY', catchUpEvery.prefault('5m'), {
      group: 'features',
      description:
        "A duration (5m, 1h; at most 24d) or off: how often the relay lists NetBox's reports and queues those whose webhook never arrived (needs NETBOX_URL and NETBOX_TOKEN).",
    }),
  }),
  store: z.object({
    dataDir: env('DATA_DIR', z.string().trim().min(1).default('./data'), {
      group: 'basics',
      description: 'Where relay.sqlite (the outbox) and, when mails go to files (no SMTP_URL), mail/*.eml live. One relay per data dir.',
    }),
    databaseUrl: env(
      'DATABASE_URL',
      z
        .string()
        .trim()
        .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a PostgreSQL URL (example: postgres://relay:secret@db:5432/compliance_relay)')
        .optional(),
      {
        secret: true,
        group: 'basics',
        description: 'PostgreSQL instead of SQLite, so that several relays share one queue.',
        example: 'postgres://relay:password@db.example.com:5432/compliance_relay',
      },
    ),
    sqliteSynchronous: env('SQLITE_SYNCHRONOUS', z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'), {
      group: 'advanced',
      description:
        'Durability against speed: FULL, each acknowledged delivery survives a power loss; NORMAL, faster on slow disks but only a process crash is survived (docs/operations.md).',
    }),
  }),
  retention: z.object({
    days: env('RETENTION_DAYS', nonNegativeInt(30, 36_500), {
      group: 'features',
      description:
        'Sent deliveries (with their bodies, kept mails and route decisions) are deleted this many days after sending; 0 keeps them.',
    }),
  }),
  // How mail leaves: MAIL_TRANSPORT and each transport's section (SMTP's, Microsoft Graph's with OAuth2's), read by its descriptor.
  transport: z.object(buildTransportSettings(TRANSPORTS)),
  mail: z.object({
    from: env('MAIL_FROM', address.default('Compliance Relay <compliance-relay@localhost>'), {
      group: 'basics',
      description: 'Sender; its domain also names the Message-IDs.',
    }),
    timezone: env(
      'MAIL_TIMEZONE',
      z.string().trim().default('UTC').refine(isTimeZone, 'is not an IANA time zone (example: Europe/Berlin)'),
      {
        group: 'basics',
        description: 'IANA time zone for dates in mails (Europe/Berlin).',
      },
    ),
    templatesDir: env('TEMPLATES_DIR', z.string().trim().optional(), {
      group: 'features',
      description: 'A copy of templates/ whose mail templates are used instead of the built-in ones (the dashboard keeps its own).',
    }),
  }),
  // The default route's recipients (without ROUTES_FILE).
  recipients: z.object({
    to: env('MAIL_TO', addressList.optional(), {
      group: 'basics',
      description: 'Comma-separated recipients; required with SMTP_URL or MAIL_TRANSPORT=graph unless ROUTES_FILE is set.',
      defaultText: 'compliance-reports@localhost when mails go to files',
      example: 'netops@example.com',
    }),
    cc: env('MAIL_CC', addressList.optional(), { group: 'basics', description: 'Comma-separated copy recipients.' }),
    bcc: env('MAIL_BCC', addressList.optional(), {
      group: 'basics',
      description: 'Comma-separated blind copies (envelope only, never in a header).',
    }),
  }),
  routing: z.object({
    file: env('ROUTES_FILE', z.string().trim().optional(), {
      group: 'basics',
      description: 'YAML routes: who gets which report (docs/routes.md); unset: every report to MAIL_TO/CC/BCC.',
    }),
  }),
  sourcesFile: env('SOURCES_FILE', z.string().trim().optional(), {
    group: 'basics',
    description: 'YAML list of further NetBox instances, each at WEBHOOK_PATH/<name> (docs/sources.md).',
  }),
  waivers: z.object({
    file: env('WAIVERS_FILE', z.string().trim().optional(), {
      group: 'features',
      description: 'YAML accepted exceptions kept in git, merged with the stored ones and read-only in the dashboard (docs/waivers.md).',
      example: '/etc/relay/waivers.yaml',
    }),
  }),
  admin: z.object({
    token: env('ADMIN_TOKEN', z.string().min(16, 'must be at least 16 characters').max(512).optional(), {
      secret: true,
      group: 'basics',
      description: 'Turns on the dashboard at /ui and the admin API; at least 16 characters (openssl rand -hex 32).',
    }),
  }),
  observe: z.object({
    metricsToken: env('METRICS_TOKEN', z.string().min(16, 'must be at least 16 characters').max(512).optional(), {
      secret: true,
      group: 'basics',
      description: 'When set, GET /metrics needs "Authorization: Bearer <token>" (at least 16 characters).',
    }),
  }),
  log: z.object({
    level: env('LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), {
      group: 'basics',
      description: 'Least severe log level written.',
    }),
  }),
  relayUrl: env('RELAY_URL', httpUrl.optional(), {
    group: 'features',
    description:
      'The relay\'s own public URL (its dashboard): each failing result in a mail links to its pre-filled "Accept as an exception" form; unset: no link.',
    example: 'https://relay.example.com',
  }),
});

export type Settings = z.infer<typeof SettingsSchema>;

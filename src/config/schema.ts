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
  port,
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

/**
 * express's `trust proxy` (https://expressjs.com/en/guide/behind-proxies.html), checked by the library express compiles it
 * with (proxy-addr), so that a value express would refuse at start is refused with the rest of the configuration.
 */
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

/** The documentation of a setting of `schema`. */
export function readSettingMeta(name: string, schema: SettingsSchema): SettingMeta {
  return (schema.shape[name] as z.ZodType).meta() as unknown as SettingMeta;
}

/** A schema of settings: {@link EnvSchema}, or it with further transports' sections. */
export type SettingsSchema = z.ZodObject<z.ZodRawShape>;

/**
 * The relay's one schema with every transport's section: a transport's settings are its descriptor's, so
 * one added to TRANSPORTS (or given by a test) is parsed, documented and listed like the rest. The built-in
 * sections already sit in {@link EnvSchema}, where the reference shows them.
 */
export function buildEnvSchema(transports: readonly TransportDescriptor[] = TRANSPORTS): SettingsSchema {
  return EnvSchema.extend(buildTransportSettings(transports));
}

/** The variables of `schema` that hold secrets (flagged `secret`): each may instead be given as `<NAME>_FILE`, never both. */
export function listSecretVariables(schema: SettingsSchema): string[] {
  return Object.keys(schema.shape).filter((name) => readSettingMeta(name, schema).secret === true);
}

/**
 * Every environment variable the relay reads: its type, default, allowed values, group and description.
 * docs/configuration.md's reference, .env.example and `check-config` are generated from it.
 */
export const EnvSchema = z.object({
  // Listener and webhook
  // No default here: loadConfig picks 127.0.0.1 without a webhook secret, 0.0.0.0 with one.
  // A name is resolved before start (check-config and serve), as listening on it would.
  HOST: setting(z.string().trim().min(1).max(253).optional(), {
    group: 'basics',
    description:
      'Address to listen on (0.0.0.0 or :: for all); a name is resolved before start. Beyond loopback the relay needs WEBHOOK_SECRET (or WEBHOOK_ALLOW_UNSIGNED=true).',
    allowedText: 'an IP address of this machine, a host name that resolves to one',
    defaultText: '127.0.0.1 without WEBHOOK_SECRET, 0.0.0.0 with it',
    example: '0.0.0.0',
  }),
  PORT: setting(port(8080), { group: 'basics', description: 'Port to listen on.' }),
  TRUST_PROXY: setting(trustProxy.prefault('false'), {
    group: 'basics',
    description: 'Behind a reverse proxy, whose X-Forwarded-For to believe (express "trust proxy"), e.g. loopback, 10.0.0.0/8.',
    allowedText: '`true`, `false`, a hop count, comma-separated addresses, CIDR ranges and `loopback`, `linklocal`, `uniquelocal`',
  }),
  WEBHOOK_PATH: setting(
    z
      .string()
      .trim()
      .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must be a path starting with /')
      .default('/webhook'),
    { group: 'basics', description: 'Path of the webhook NetBox posts to (a trailing slash is accepted).' },
  ),
  WEBHOOK_SECRET: setting(z.string().max(255).optional(), {
    secret: true,
    group: 'basics',
    description:
      "The NetBox webhook's secret, at least 16 characters (generate one: openssl rand -hex 32): X-Hook-Signature must match. Empty is an error.",
  }),
  WEBHOOK_SECRET_PREVIOUS: setting(z.string().max(255).optional(), {
    secret: true,
    group: 'basics',
    description: 'During a rotation, the old secret, accepted too.',
  }),
  WEBHOOK_ALLOW_UNSIGNED: setting(bool(false), {
    group: 'basics',
    description: 'true: listen beyond loopback without WEBHOOK_SECRET; anyone who reaches the port can queue mail.',
  }),
  WEBHOOK_ALLOWED_IPS: setting(cidrList.optional(), {
    group: 'features',
    description: 'Comma-separated addresses and CIDR ranges allowed to post (others get 403); unset: any.',
    example: '10.0.0.0/8, 2001:db8::/32',
  }),
  WEBHOOK_RATE_LIMIT: setting(nonNegativeInt(0), {
    group: 'features',
    description: 'Webhook requests per client address per minute (429 beyond it); 0: no limit.',
  }),

  // Storage
  DATA_DIR: setting(z.string().trim().min(1).default('./data'), {
    group: 'basics',
    description: 'Where relay.sqlite (the outbox) and, without SMTP, mail/*.eml live. One relay per data dir.',
  }),
  DATABASE_URL: setting(
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
  RETENTION_DAYS: setting(nonNegativeInt(30, 36_500), {
    group: 'features',
    description: 'Sent deliveries (and their bodies) are deleted this many days after sending; 0 keeps them.',
  }),

  // How mail leaves: MAIL_TRANSPORT and each transport's section (SMTP's, Microsoft Graph's with OAuth2's)
  ...buildTransportSettings(TRANSPORTS),

  // Mail
  MAIL_FROM: setting(address.default('Compliance Relay <compliance-relay@localhost>'), {
    group: 'basics',
    description: 'Sender; its domain also names the Message-IDs.',
  }),
  MAIL_TO: setting(addressList.optional(), {
    group: 'basics',
    description: 'Comma-separated recipients; required with SMTP_URL unless ROUTES_FILE is set.',
    defaultText: 'compliance-reports@localhost without SMTP',
    example: 'netops@example.com',
  }),
  MAIL_CC: setting(addressList.optional(), { group: 'basics', description: 'Comma-separated copy recipients.' }),
  MAIL_BCC: setting(addressList.optional(), {
    group: 'basics',
    description: 'Comma-separated blind copies (envelope only, never in a header).',
  }),
  MAIL_TIMEZONE: setting(z.string().trim().default('UTC').refine(isTimeZone, 'is not an IANA time zone (example: Europe/Berlin)'), {
    group: 'basics',
    description: 'IANA time zone for dates in mails (Europe/Berlin).',
  }),
  ROUTES_FILE: setting(z.string().trim().optional(), {
    group: 'basics',
    description: 'YAML routes: who gets which report (docs/routes.md); unset: every report to MAIL_TO/CC/BCC.',
  }),
  SOURCES_FILE: setting(z.string().trim().optional(), {
    group: 'basics',
    description: 'YAML list of further NetBox instances, each at WEBHOOK_PATH/<name> (docs/sources.md).',
  }),
  TEMPLATES_DIR: setting(z.string().trim().optional(), {
    group: 'features',
    description: 'A copy of templates/ to use instead of the built-in templates.',
  }),

  // NetBox: the default source (SOURCES_FILE adds named ones)
  NETBOX_URL: setting(httpUrl.optional(), {
    group: 'basics',
    description:
      "NetBox's base URL, with its base path: mails link into NetBox; with NETBOX_TOKEN they also list the failing results, missed reports are fetched (CATCH_UP_EVERY) and routes may mail device owners. Unset: none of these; mails show NetBox's paths as plain text.",
    example: 'https://netbox.example.com',
  }),
  // A header value: printable ASCII only, so a stray newline cannot add a header.
  NETBOX_TOKEN: setting(
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
  NETBOX_CA_FILE: setting(z.string().trim().optional(), {
    group: 'features',
    description: "PEM file with the CA that signed NetBox's certificate (private CA or self-signed): the certificate is always verified.",
  }),

  // Operations
  ADMIN_TOKEN: setting(z.string().min(16, 'must be at least 16 characters').max(512).optional(), {
    secret: true,
    group: 'basics',
    description: 'Turns on the dashboard at /ui and the admin API; at least 16 characters (openssl rand -hex 32).',
  }),
  METRICS_TOKEN: setting(z.string().min(16, 'must be at least 16 characters').max(512).optional(), {
    secret: true,
    group: 'basics',
    description: 'When set, GET /metrics needs "Authorization: Bearer <token>" (at least 16 characters).',
  }),
  LOG_LEVEL: setting(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), {
    group: 'basics',
    description: 'Least severe log level written.',
  }),
  EXPECT_REPORT_EVERY: setting(duration.optional(), {
    group: 'features',
    description: 'A duration with its unit (24h, 7d): with no report for that long, mail the recipients once (the watchdog).',
    example: '24h',
  }),
  CATCH_UP_EVERY: setting(catchUpEvery.prefault('5m'), {
    group: 'features',
    description:
      "A duration (5m, 1h; at most 24d) or off: how often the relay lists NetBox's reports and queues those whose webhook never arrived (needs NETBOX_URL and NETBOX_TOKEN).",
  }),
  WAIVERS_FILE: setting(z.string().trim().optional(), {
    group: 'features',
    description: 'YAML accepted exceptions kept in git, merged with the stored ones and read-only in the dashboard (docs/waivers.md).',
    example: '/etc/relay/waivers.yaml',
  }),
  RELAY_URL: setting(httpUrl.optional(), {
    group: 'features',
    description:
      'The relay\'s own public URL (its dashboard): each failing result in a mail links to its pre-filled "Accept as an exception" form; unset: no link.',
    example: 'https://relay.example.com',
  }),

  // Advanced: limits and timings with sound defaults
  SHUTDOWN_TIMEOUT_MS: setting(positiveInt(10_000, MAX_TIMER_MS), {
    group: 'advanced',
    description:
      "On SIGTERM, how long sends in flight may finish (unfinished ones are resent at the next start): keep it below the orchestrator's grace period (Kubernetes: terminationGracePeriodSeconds, 30 s by default).",
  }),
  SQLITE_SYNCHRONOUS: setting(z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'), {
    group: 'advanced',
    description:
      'Durability against speed: FULL, each acknowledged delivery survives a power loss; NORMAL, faster on slow disks but only a process crash is survived (docs/operations.md).',
  }),
});

export type Env = z.infer<typeof EnvSchema>;

/** Variables that hold secrets (flagged `secret` in {@link EnvSchema}): each may instead be given as `<NAME>_FILE`, never both. */
export const SECRET_VARIABLES = listSecretVariables(EnvSchema) as (keyof Env)[];

import { z } from 'zod';
import { DEFAULT_WAIVER_MAX_DAYS } from '../waivers';
import { address, addressList, bool, cidrList, duration, httpUrl, nonNegativeInt, port, positiveInt } from '../shared';

/**
 * Every environment variable the relay reads, with its default. The README and .env.example list
 * the same variables; a test keeps the three in step.
 */
export const EnvSchema = z.object({
  // HTTP listener
  // No default here: loadConfig picks 127.0.0.1 without a webhook secret, 0.0.0.0 with one (issue 14).
  HOST: z.string().trim().min(1).optional(),
  PORT: port(8080),
  TRUST_PROXY: z.string().trim().default('false'),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  HTTP_HEADERS_TIMEOUT_MS: positiveInt(10_000),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),

  // Webhook
  WEBHOOK_PATH: z
    .string()
    .trim()
    .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must be a path starting with /')
    .default('/webhook'),
  WEBHOOK_SECRET: z.string().max(255).optional(),
  WEBHOOK_SECRET_PREVIOUS: z.string().max(255).optional(),
  /** Listen beyond loopback without WEBHOOK_SECRET, knowingly: anyone who reaches the port can queue mail. */
  WEBHOOK_ALLOW_UNSIGNED: bool(false),
  WEBHOOK_MAX_BYTES: positiveInt(1_048_576, 64 * 1_048_576),
  WEBHOOK_ALLOWED_IPS: cidrList.optional(),
  WEBHOOK_RATE_LIMIT: nonNegativeInt(0),
  WEBHOOK_RATE_LIMIT_WINDOW_MS: positiveInt(60_000),

  // Retention of sent deliveries
  RETENTION_DAYS: nonNegativeInt(30, 36_500),
  RETENTION_INTERVAL_MS: positiveInt(3_600_000),

  // Storage
  DATA_DIR: z.string().trim().min(1).default('./data'),
  SQLITE_SYNCHRONOUS: z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'),
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a PostgreSQL URL (example: postgres://relay:secret@db:5432/compliance_relay)')
    .optional(),
  DATABASE_POOL_SIZE: positiveInt(10, 100),

  // SMTP
  SMTP_URL: z.string().trim().optional(),
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  SMTP_TLS_REJECT_UNAUTHORIZED: bool(true),
  SMTP_CA_FILE: z.string().trim().optional(),
  SMTP_POOL_SIZE: positiveInt(5, 100),
  SMTP_CONNECTION_TIMEOUT_MS: positiveInt(10_000),
  SMTP_GREETING_TIMEOUT_MS: positiveInt(10_000),
  SMTP_SOCKET_TIMEOUT_MS: positiveInt(60_000),
  /** `password`: SMTP_USER/SMTP_PASSWORD as always (or no login); `oauth2`: AUTH XOAUTH2 with a token (issue 18). */
  SMTP_AUTH: z.enum(['password', 'oauth2']).default('password'),

  // Mail transport: SMTP (or .eml files without SMTP_URL), or Microsoft Graph's sendMail (issue 18)
  MAIL_TRANSPORT: z.enum(['smtp', 'graph']).default('smtp'),
  GRAPH_URL: httpUrl.default('https://graph.microsoft.com'),
  /** The mailbox Graph sends as (`/users/{sender}/sendMail`); default: MAIL_FROM's address. */
  GRAPH_SENDER: address.optional(),
  GRAPH_TIMEOUT_MS: positiveInt(30_000),
  // Exchange Online allows 4 concurrent requests per app and mailbox.
  GRAPH_CONCURRENCY: positiveInt(4, 16),

  // OAuth2 client credentials, for SMTP_AUTH=oauth2 and MAIL_TRANSPORT=graph
  OAUTH2_PROVIDER: z.enum(['microsoft', 'google']).default('microsoft'),
  OAUTH2_TENANT_ID: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9.-]+$/,
      'must be the directory (tenant) ID or domain, e.g. 00000000-0000-0000-0000-000000000000 or contoso.onmicrosoft.com',
    )
    .optional(),
  OAUTH2_CLIENT_ID: z.string().trim().min(1).max(200).optional(),
  OAUTH2_CLIENT_SECRET: z.string().max(1000).optional(),
  OAUTH2_CERTIFICATE_FILE: z.string().trim().optional(),
  OAUTH2_PRIVATE_KEY_FILE: z.string().trim().optional(),
  OAUTH2_SERVICE_ACCOUNT_FILE: z.string().trim().optional(),
  OAUTH2_SCOPE: z.string().trim().min(1).max(1000).optional(),
  OAUTH2_TOKEN_URL: httpUrl.optional(),
  OAUTH2_TIMEOUT_MS: positiveInt(10_000),

  // Mail
  MAIL_FROM: address.default('Compliance Relay <compliance-relay@localhost>'),
  MAIL_TO: addressList.optional(),
  MAIL_CC: addressList.optional(),
  MAIL_BCC: addressList.optional(),
  MAIL_REPLY_TO: address.optional(),
  MAIL_TIMEZONE: z
    .string()
    .trim()
    .default('UTC')
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en-GB', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'is not an IANA time zone (example: Europe/Berlin)'),
  TEMPLATES_DIR: z.string().trim().optional(),
  /** YAML routes: who gets which report (see README "Routes"); without it MAIL_TO gets every report. */
  ROUTES_FILE: z.string().trim().optional(),
  /** YAML NetBox sources beside the default one (see README "Several NetBox sources"). */
  SOURCES_FILE: z.string().trim().optional(),

  // NetBox
  NETBOX_URL: httpUrl.optional(),
  // A header value: printable ASCII only, so a stray newline cannot add a header.
  NETBOX_TOKEN: z
    .string()
    .trim()
    .max(500)
    .regex(/^[\x21-\x7e]+$/, 'must be one token without spaces (nbt_<key>.<token> or a 40-character key)')
    .optional(),
  NETBOX_CA_FILE: z.string().trim().optional(),
  NETBOX_TLS_REJECT_UNAUTHORIZED: bool(true),
  NETBOX_TIMEOUT_MS: positiveInt(10_000),
  NETBOX_ENRICH_BUDGET_MS: positiveInt(30_000),
  MAIL_MAX_FAILURES: positiveInt(50, 10_000),
  MAIL_ATTACH_CSV: bool(false),
  MAIL_ATTACH_MAX_BYTES: positiveInt(5_000_000, 50_000_000),
  // The report mail's trend chart: how many reports of the series it plots (the current one included); 0 = no chart.
  // At most 30: more points than that no longer fit the chart's width legibly, nor its PNG the 40 kB budget.
  MAIL_CHART_REPORTS: nonNegativeInt(12, 30),

  // Delivery worker
  RETRY_MAX_ATTEMPTS: positiveInt(48, 1000),
  RETRY_BASE_MS: positiveInt(60_000),
  RETRY_MAX_DELAY_MS: positiveInt(3_600_000),
  WORKER_POLL_MS: positiveInt(1_000),
  LEASE_MS: positiveInt(300_000),
  MAX_UNRECORDED_OUTCOMES: positiveInt(10_000),
  /** Different deliveries answered 4xx in a row (no mail accepted between) before the whole queue pauses. */
  SMTP_PAUSE_AFTER_4XX: positiveInt(3, 1000),

  // Logs
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: pretty on a terminal, JSON otherwise (decided where stdout is known, cli/serve.ts).
  LOG_FORMAT: z.enum(['json', 'pretty'], { error: 'must be json or pretty (unset: pretty on a terminal, JSON otherwise)' }).optional(),

  // Watchdog: mail the recipients when no report arrived for this long (unset: off)
  EXPECT_REPORT_EVERY: duration.optional(),

  // Accepted exceptions (docs/waivers.md)
  /** YAML waivers kept in git, merged with the stored ones and read-only in the dashboard. */
  WAIVERS_FILE: z.string().trim().optional(),
  /** How far ahead a waiver's until may be, in days from when it is made. */
  WAIVER_MAX_DAYS: positiveInt(DEFAULT_WAIVER_MAX_DAYS, 3650),

  // Dashboard and admin
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').max(512).optional(),

  // Health and metrics
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').max(512).optional(),
  SMTP_CHECK_INTERVAL: duration.optional(),
});

export type Env = z.infer<typeof EnvSchema>;

/** Variables that hold secrets: each may instead be given as `<NAME>_FILE`, never both. */
export const SECRET_VARIABLES = [
  'WEBHOOK_SECRET',
  'WEBHOOK_SECRET_PREVIOUS',
  'SMTP_PASSWORD',
  'OAUTH2_CLIENT_SECRET',
  'METRICS_TOKEN',
  'NETBOX_TOKEN',
  'ADMIN_TOKEN',
  'DATABASE_URL',
] as const;

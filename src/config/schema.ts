import { z } from 'zod';
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

  // Delivery worker
  RETRY_MAX_ATTEMPTS: positiveInt(48, 1000),
  RETRY_BASE_MS: positiveInt(60_000),
  RETRY_MAX_DELAY_MS: positiveInt(3_600_000),
  WORKER_POLL_MS: positiveInt(1_000),
  LEASE_MS: positiveInt(300_000),
  MAX_UNRECORDED_OUTCOMES: positiveInt(10_000),

  // Logs
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),

  // Watchdog: mail the recipients when no report arrived for this long (unset: off)
  EXPECT_REPORT_EVERY: duration.optional(),

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
  'METRICS_TOKEN',
  'NETBOX_TOKEN',
  'ADMIN_TOKEN',
  'DATABASE_URL',
] as const;

import { WAIVER_MAX_DAYS_AHEAD } from '../waivers';
import * as notify from '../notify';
import * as fixed from './fixed-limits';
import { CATCH_UP_MAX_MAILED } from './sources-file';

/** Variables the relay no longer reads, each with what took its place. */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  GRAPH_CONCURRENCY: `is no longer read: Graph requests in flight are fixed at ${notify.GRAPH_CONCURRENCY}, Exchange Online's limit per app and mailbox; remove it`,
  SMTP_PAUSE_AFTER_4XX: `is no longer read: ${fixed.PAUSE_AFTER_4XX_IN_A_ROW} different deliveries answered 4xx in a row pause the queue; remove it`,
  OAUTH2_TIMEOUT_MS: `is no longer read: a token request may take ${notify.OAUTH2_TIMEOUT_MS / 1000} s; remove it`,
  GRAPH_TIMEOUT_MS: `is no longer read: a Graph sendMail request may take ${notify.GRAPH_TIMEOUT_MS / 1000} s; remove it`,
  WEBHOOK_RATE_LIMIT_WINDOW_MS: 'is no longer read: WEBHOOK_RATE_LIMIT counts requests per minute; remove it',
  MAX_UNRECORDED_OUTCOMES:
    'is no longer read: the worker settles one batch at a time, and a batch the store refuses holds the queue until it is recorded; remove it',
  HTTP_HEADERS_TIMEOUT_MS: `is no longer read: a client has ${fixed.HTTP_HEADERS_TIMEOUT_MS / 1000} s to send its headers; remove it`,
  HTTP_REQUEST_TIMEOUT_MS: `is no longer read: a client has ${fixed.HTTP_REQUEST_TIMEOUT_MS / 1000} s to send its whole request; remove it`,
  WEBHOOK_MAX_BYTES: `is no longer read: webhook bodies over ${fixed.WEBHOOK_MAX_BYTES / 1_048_576} MiB are refused with 413; remove it`,
  RETENTION_INTERVAL_MS: 'is no longer read: sent deliveries are pruned at start and then every hour; remove it',
  NETBOX_TIMEOUT_MS: `is no longer read: one NetBox request may stay silent ${fixed.NETBOX_TIMEOUT_MS / 1000} s; remove it`,
  NETBOX_ENRICH_BUDGET_MS: `is no longer read: all of one mail's NetBox requests end within ${fixed.NETBOX_ENRICH_BUDGET_MS / 1000} s; remove it`,
  RETRY_MAX_ATTEMPTS: `is no longer read: a delivery is sent at most ${fixed.RETRY_MAX_ATTEMPTS} times (over at most 42 h) before it is dead; remove it`,
  RETRY_BASE_MS: `is no longer read: the first retry comes within ${fixed.RETRY_BASE_MS / 60_000} minute, each next one within twice as long; remove it`,
  RETRY_MAX_DELAY_MS: `is no longer read: retries are at most ${fixed.RETRY_MAX_DELAY_MS / 3_600_000} hour apart; remove it`,
  WORKER_POLL_MS: `is no longer read: the queue is looked at every ${fixed.WORKER_POLL_MS / 1000} s when nothing wakes the worker; remove it`,
  LEASE_MS: `is no longer read: a send holds its delivery for ${fixed.LEASE_MS / 60_000} minutes (renewed while it runs) before another relay may take it over; remove it`,
  // The mail's limits live in compose/ (below this layer): their values are written out here, and a test holds them equal.
  MAIL_MAX_FAILURES:
    'is no longer read: a mail lists at most 50 failing tests, so that Gmail does not clip it, the rest behind "and N more" linked to NetBox; remove it',
  MAIL_CHART_REPORTS: "is no longer read: the trend chart plots the last 12 reports (a route's chart: false leaves it out); remove it",
  MAIL_ATTACH_MAX_BYTES: "is no longer read: the CSV attachment (a route's attach_csv) is capped at 5000000 bytes; remove it",
  MAIL_ATTACH_CSV: 'is no longer read: set attach_csv: true on the route in ROUTES_FILE',
  MAIL_REPLY_TO: 'is no longer read: mails carry a Reply-To only from their route; set reply_to on the route in ROUTES_FILE',
  CATCH_UP_MAX: `is no longer read: a catch-up mails at most ${CATCH_UP_MAX_MAILED} missed reports of a source one by one, and names older ones in one notice; remove it`,
  WAIVER_MAX_DAYS: `is no longer read: a waiver's until may be at most ${WAIVER_MAX_DAYS_AHEAD} days after it is made; remove it`,
  // store/'s PG_POOL_SIZE, written out so that loading the settings does not load the store; a test holds them equal.
  DATABASE_POOL_SIZE: 'is no longer read: a relay holds at most 10 PostgreSQL connections; remove it',
  LOG_FORMAT: 'is no longer read: logs are pretty on a terminal and JSON otherwise; remove it',
  NETBOX_TLS_REJECT_UNAUTHORIZED:
    "is no longer read: NetBox's certificate is always verified; give a private CA or a self-signed certificate with NETBOX_CA_FILE (or a source's ca_file in SOURCES_FILE); remove it",
  SMTP_CONNECTION_TIMEOUT_MS: `is no longer read: an SMTP connection may take ${notify.SMTP_CONNECTION_TIMEOUT_MS / 1000} s to open; remove it`,
  SMTP_GREETING_TIMEOUT_MS: `is no longer read: the SMTP server's greeting may take ${notify.SMTP_GREETING_TIMEOUT_MS / 1000} s; remove it`,
  SMTP_SOCKET_TIMEOUT_MS: `is no longer read: an SMTP connection may stay silent ${notify.SMTP_SOCKET_TIMEOUT_MS / 1000} s; remove it`,
  SMTP_CHECK_INTERVAL: `is no longer read: /readyz's SMTP check connects every ${fixed.TRANSPORT_CHECK_INTERVAL_MS / 60_000} minutes, besides every real send; remove it`,
  SMTP_TLS_REJECT_UNAUTHORIZED:
    "is no longer read: the SMTP server's certificate is always verified; give a private CA or a self-signed certificate in SMTP_CA_FILE (PEM), and remove it",
  SMTP_AUTH:
    'is no longer read: the SMTP login is AUTH XOAUTH2 when OAUTH2_CLIENT_ID (Microsoft) or OAUTH2_SERVICE_ACCOUNT_FILE (Google) is set, otherwise SMTP_USER and SMTP_PASSWORD; remove it',
  OAUTH2_PROVIDER:
    'is no longer read: OAUTH2_SERVICE_ACCOUNT_FILE means Google, OAUTH2_TENANT_ID and OAUTH2_CLIENT_ID mean Microsoft; remove it',
  OAUTH2_SCOPE:
    "is no longer read: the token's scope follows from the provider and the transport (Exchange Online's SMTP, Microsoft Graph, Gmail); remove it",
  OAUTH2_PRIVATE_KEY_FILE:
    'is read for this release only: append the private key to the OAUTH2_CERTIFICATE_FILE file (one PEM holding the certificate and its key), then remove it',
  GRAPH_SENDER: "is no longer read: Microsoft Graph sends as MAIL_FROM's address; set MAIL_FROM to that mailbox and remove it",
};

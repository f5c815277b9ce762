import {
  GRAPH_CONCURRENCY,
  GRAPH_TIMEOUT_MS,
  OAUTH2_TIMEOUT_MS,
  SMTP_CONNECTION_TIMEOUT_MS,
  SMTP_GREETING_TIMEOUT_MS,
  SMTP_SOCKET_TIMEOUT_MS,
} from '../notify';
import type { ConfigIssue } from './config-issue';

/** Different deliveries answered 4xx in a row (no mail accepted between) before the whole queue pauses. */
export const PAUSE_AFTER_4XX_IN_A_ROW = 3;

/** WEBHOOK_RATE_LIMIT counts a client's requests over this window: "per minute" is what operators reason in. */
export const WEBHOOK_RATE_LIMIT_WINDOW_MS = 60_000;

/** How often /readyz's SMTP check connects besides every real send: often enough for an alert, rarely enough for the server. */
export const SMTP_CHECK_INTERVAL_MS = 5 * 60_000;

/**
 * Variables the relay no longer reads, each with what took its place. One still set is not an error (the
 * relay works as before) but is warned about by `check-config` and at start, so that nothing changes silently.
 */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  GRAPH_CONCURRENCY: `is no longer read: Graph requests in flight are fixed at ${GRAPH_CONCURRENCY}, Exchange Online's limit per app and mailbox; remove it`,
  SMTP_PAUSE_AFTER_4XX: `is no longer read: ${PAUSE_AFTER_4XX_IN_A_ROW} different deliveries answered 4xx in a row pause the queue; remove it`,
  OAUTH2_TIMEOUT_MS: `is no longer read: a token request may take ${OAUTH2_TIMEOUT_MS / 1000} s; remove it`,
  GRAPH_TIMEOUT_MS: `is no longer read: a Graph sendMail request may take ${GRAPH_TIMEOUT_MS / 1000} s; remove it`,
  WEBHOOK_RATE_LIMIT_WINDOW_MS: 'is no longer read: WEBHOOK_RATE_LIMIT counts requests per minute; remove it',
  MAX_UNRECORDED_OUTCOMES:
    'is no longer read: the worker settles one batch at a time, and a batch the store refuses holds the queue until it is recorded; remove it',
  SMTP_CONNECTION_TIMEOUT_MS: `is no longer read: an SMTP connection may take ${SMTP_CONNECTION_TIMEOUT_MS / 1000} s to open; remove it`,
  SMTP_GREETING_TIMEOUT_MS: `is no longer read: the SMTP server's greeting may take ${SMTP_GREETING_TIMEOUT_MS / 1000} s; remove it`,
  SMTP_SOCKET_TIMEOUT_MS: `is no longer read: an SMTP connection may stay silent ${SMTP_SOCKET_TIMEOUT_MS / 1000} s; remove it`,
  SMTP_CHECK_INTERVAL: `is no longer read: /readyz's SMTP check connects every ${SMTP_CHECK_INTERVAL_MS / 60_000} minutes, besides every real send; remove it`,
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

/** A warning for each retired variable that is still set (environment or .env), naming what replaced it. */
export function checkRetiredSettings(env: Readonly<Record<string, string>>): ConfigIssue[] {
  return Object.entries(RETIRED_SETTINGS)
    .filter(([name]) => env[name] !== undefined)
    .map(([variable, message]) => ({ variable, message }));
}

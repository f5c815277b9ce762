import type { ConfigIssue } from './config-issue';
import {
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_REQUEST_TIMEOUT_MS,
  LEASE_MS,
  NETBOX_ENRICH_BUDGET_MS,
  NETBOX_TIMEOUT_MS,
  RETRY_BASE_MS,
  RETRY_MAX_ATTEMPTS,
  RETRY_MAX_DELAY_MS,
  WEBHOOK_MAX_BYTES,
  WORKER_POLL_MS,
} from './fixed-limits';

/** sendMail requests in flight at once: Exchange Online allows 4 per app and mailbox, so more only earns 429s. */
export const GRAPH_CONCURRENCY = 4;

/** Different deliveries answered 4xx in a row (no mail accepted between) before the whole queue pauses. */
export const PAUSE_AFTER_4XX_IN_A_ROW = 3;

/** Time for one Graph sendMail request. */
export const GRAPH_TIMEOUT_MS = 30_000;

/** WEBHOOK_RATE_LIMIT counts a client's requests over this window: "per minute" is what operators reason in. */
export const WEBHOOK_RATE_LIMIT_WINDOW_MS = 60_000;

/** Time for one OAuth2 token request. */
export const OAUTH2_TIMEOUT_MS = 10_000;

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
  HTTP_HEADERS_TIMEOUT_MS: `is no longer read: a client has ${HTTP_HEADERS_TIMEOUT_MS / 1000} s to send its headers; remove it`,
  HTTP_REQUEST_TIMEOUT_MS: `is no longer read: a client has ${HTTP_REQUEST_TIMEOUT_MS / 1000} s to send its whole request; remove it`,
  WEBHOOK_MAX_BYTES: `is no longer read: webhook bodies over ${WEBHOOK_MAX_BYTES / 1_048_576} MiB are refused with 413; remove it`,
  RETENTION_INTERVAL_MS: 'is no longer read: sent deliveries are pruned at start and then every hour; remove it',
  NETBOX_TIMEOUT_MS: `is no longer read: one NetBox request may stay silent ${NETBOX_TIMEOUT_MS / 1000} s; remove it`,
  NETBOX_ENRICH_BUDGET_MS: `is no longer read: all of one mail's NetBox requests end within ${NETBOX_ENRICH_BUDGET_MS / 1000} s; remove it`,
  RETRY_MAX_ATTEMPTS: `is no longer read: a delivery is sent at most ${RETRY_MAX_ATTEMPTS} times (over at most 42 h) before it is dead; remove it`,
  RETRY_BASE_MS: `is no longer read: the first retry comes within ${RETRY_BASE_MS / 60_000} minute, each next one within twice as long; remove it`,
  RETRY_MAX_DELAY_MS: `is no longer read: retries are at most ${RETRY_MAX_DELAY_MS / 3_600_000} hour apart; remove it`,
  WORKER_POLL_MS: `is no longer read: the queue is looked at every ${WORKER_POLL_MS / 1000} s when nothing wakes the worker; remove it`,
  LEASE_MS: `is no longer read: a send holds its delivery for ${LEASE_MS / 60_000} minutes (renewed while it runs) before another relay may take it over; remove it`,
};

/** A warning for each retired variable that is still set (environment or .env), naming what replaced it. */
export function checkRetiredSettings(env: Readonly<Record<string, string>>): ConfigIssue[] {
  return Object.entries(RETIRED_SETTINGS)
    .filter(([name]) => env[name] !== undefined)
    .map(([variable, message]) => ({ variable, message }));
}

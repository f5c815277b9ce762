import type { ConfigIssue } from './config-issue';

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
};

/** A warning for each retired variable that is still set (environment or .env), naming what replaced it. */
export function checkRetiredSettings(env: Readonly<Record<string, string>>): ConfigIssue[] {
  return Object.entries(RETIRED_SETTINGS)
    .filter(([name]) => env[name] !== undefined)
    .map(([variable, message]) => ({ variable, message }));
}

// Limits that suit every relay, so they are not settings; Config carries those a test shortens.

/** A client must send its headers within 10 s: NetBox sends them at once, a slowloris client is cut. */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000;

/** A client must send its whole request within 30 s: a 1 MiB body takes far less on any link NetBox uses. */
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;

/** Webhook bodies over 1 MiB are refused with 413: a report's webhook is a few kB, its results stay in NetBox. */
export const WEBHOOK_MAX_BYTES = 1_048_576;

/** Sent deliveries are pruned hourly (and at start): retention counts in days, so an hour late is nothing. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/** One NetBox request may stay silent 10 s: a live NetBox answers a page far sooner, a hung one is given up. */
export const NETBOX_TIMEOUT_MS = 10_000;

/** All of one mail's NetBox requests end within 30 s: the mail goes without the details rather than late. */
export const NETBOX_ENRICH_BUDGET_MS = 30_000;

/** Sends per delivery before it is dead: with the delays below, given up after at most 42 h, so a day-long outage loses nothing. */
export const RETRY_MAX_ATTEMPTS = 48;

/** The first retry delay cap; it doubles after each failure (full jitter below it). */
export const RETRY_BASE_MS = 60_000;

/** The largest retry delay cap: a mail server back after an outage is tried within the hour. */
export const RETRY_MAX_DELAY_MS = 3_600_000;

/** How often the queue is looked at when nothing wakes the worker (a webhook or a requeue wakes it at once). */
export const WORKER_POLL_MS = 1_000;

/** A send's hold on its delivery (renewed while it runs): ten enrichment budgets, so no mail being composed is sent twice. */
export const LEASE_MS = 10 * NETBOX_ENRICH_BUDGET_MS;

/** Different deliveries answered 4xx in a row (no mail accepted between) before the whole queue pauses: the retry policy's, for its retired setting's warning. */
export const PAUSE_AFTER_4XX_IN_A_ROW = 3;

/** How often /readyz's mail transport check connects besides every real send: often enough for an alert, rarely enough for the server. */
export const TRANSPORT_CHECK_INTERVAL_MS = 5 * 60_000;

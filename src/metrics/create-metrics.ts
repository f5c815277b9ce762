import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BatchItem, QueuePauseStatus } from '../delivery';
import { DEFAULT_SOURCE_NAME, type WebhookOutcome } from '../webhook';
import { parseFailureCode, type Clock, type FailureCatalogue, type Logger } from '../shared';
import { DELIVERY_STATES, type Store } from '../store';

/** The relay's Prometheus series. One instance per relay: tests run several relays in one process. */
export type RelayMetrics = ReturnType<typeof createMetrics>;

export interface MetricsOptions {
  store: Pick<Store, 'readQueue'>;
  clock: Clock;
  logger: Logger;
  /** The next three are read at scrape time. */
  unrecordedOutcomes?: () => number;
  webhooksInFlight?: () => number;
  pause?: () => Pick<QueuePauseStatus, 'state' | 'openUntil' | 'held' | 'lastError'>;
  /** The only values of the `source` label (default: `default` alone). */
  sources?: readonly string[];
  /** The codes a failed send may be labelled with. */
  failures: FailureCatalogue;
}

/**
 * The relay's metrics on its own Registry, in exposition order. Queue gauges are read from the store at scrape time (every
 * replica reports the same queue); known outcomes start at 0, so rate() works from the first.
 */
export function createMetrics(options: MetricsOptions) {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const sources = options.sources ?? [DEFAULT_SOURCE_NAME];
  // Bounds the `source` label to the configured set.
  const sourceLabel = (source: string | undefined) => (source !== undefined && sources.includes(source) ? source : DEFAULT_SOURCE_NAME);
  const received = new Counter({
    name: 'compliance_relay_deliveries_received_total',
    help: 'Webhook requests by NetBox source and outcome: queued, duplicate, ignored (code = why), rejected (code = error code).',
    labelNames: ['outcome', 'code', 'source'] as const,
    registers,
  });
  const sent = new Counter({
    name: 'compliance_relay_mails_sent_total',
    help: 'Mails accepted by the mail transport (an SMTP server, Microsoft Graph, or written as .eml).',
    registers,
  });
  const failed = new Counter({
    name: 'compliance_relay_mail_failures_total',
    help: 'Delivery attempts that failed (one per delivery, however many of its route mails failed), by the code that decided (SMTP_4XX, SMTP_5XX, ECONNECTION, EAUTH, TEMPLATE, …) and what followed (retry or dead).',
    labelNames: ['reason', 'then'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'compliance_relay_send_duration_seconds',
    help: "Time from the claim of a delivery's batch to the end of that batch's sends (composing, NetBox look-ups and rendering included), by the delivery's result.",
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const [netboxErrors, ownerFallbacks, ownerGroupsUncounted] = [
    [
      'compliance_relay_netbox_fetch_errors_total',
      'Failed NetBox API calls by NetBox source and reason (AUTH, NOT_FOUND, UNREACHABLE, TIMEOUT, SERVER, PROTOCOL, UNSAFE_URL).',
    ],
    [
      'compliance_relay_owner_fallbacks_total',
      'Owner look-ups (routes by NetBox contacts) that failed, so the whole report went to the fallback addresses, by source and reason.',
    ],
    [
      'compliance_relay_owner_groups_uncounted_total',
      "Owner groups (routes by NetBox contacts) mailed without counts of their own, by source and reason: NetBox could not give the report's results, so each such mail says its counts are unavailable.",
    ],
  ].map(([name, help]) => new Counter({ name, help, labelNames: ['reason', 'source'] as const, registers }));
  sent.inc(0);
  for (const source of sources) for (const outcome of ['queued', 'duplicate'] as const) received.inc({ outcome, code: '', source }, 0);
  const refreshQueue = registerQueueSeries(registry, options);
  const labels = (reason: string, source?: string) => ({ reason: reason.slice(0, 40), source: sourceLabel(source) });
  const { failures } = options;
  return {
    registry,
    contentType: registry.contentType,
    recordWebhook(outcome: WebhookOutcome): void {
      const code = outcome.outcome === 'rejected' ? outcome.code : outcome.outcome === 'ignored' ? classifyIgnored(outcome.reason) : '';
      received.inc({ outcome: outcome.outcome, code, source: sourceLabel(outcome.source) });
    },
    recordWorker({ settled, mails }: Pick<BatchItem, 'settled' | 'mails'>, durationMs: number): void {
      // Sent without a Message-ID: every route held it back, nothing was mailed.
      if (!settled || (settled.state === 'sent' && !settled.messageId)) return;
      latency.observe({ result: settled.state === 'sent' ? 'sent' : 'failed' }, Math.max(0, durationMs) / 1000);
      // One delivery may mail several routes (ROUTES_FILE): count mails (this attempt's), not deliveries.
      if (settled.state === 'sent') return sent.inc(mails.filter((m) => m.row?.state === 'sent').length);
      // A code of the closed catalogue only, so the series stay bounded (even for a code cast past the type).
      failed.inc({ reason: parseFailureCode(settled.code, failures), then: settled.state === 'dead' ? 'dead' : 'retry' });
    },
    recordNetboxFetchError: (reason: string, source?: string) => netboxErrors.inc(labels(reason, source)),
    recordOwnerFallback: (reason: string, source?: string) => ownerFallbacks.inc(labels(reason, source)),
    recordOwnerGroupsUncounted: (reason: string, groups: number, source?: string) =>
      ownerGroupsUncounted.inc(labels(reason, source), groups),
    /** The exposition text, with the queue gauges read from the store now. */
    async render(): Promise<string> {
      await refreshQueue();
      return registry.metrics();
    },
  };
}

/** The queue gauges and their scrape-error counter; returns the refresh (on a failed read the gauges keep their value). */
function registerQueueSeries(registry: Registry, options: MetricsOptions): () => Promise<void> {
  const registers = [registry];
  const scrapeErrors = new Counter({
    name: 'compliance_relay_store_scrape_errors_total',
    help: 'Scrapes where the queue gauges could not be read from the store (they keep their last value).',
    registers,
  });
  const depth = new Gauge({
    name: 'compliance_relay_queue_deliveries',
    help: 'Deliveries in the outbox by state.',
    labelNames: ['state'] as const,
    registers,
  });
  const oldest = new Gauge({
    name: 'compliance_relay_oldest_pending_delivery_age_seconds',
    help: 'Age of the oldest delivery not yet sent nor dead (0 when none is pending).',
    registers,
  });
  const paused = () => {
    const pause = options.pause?.();
    return pause && pause.state !== 'closed' ? pause : undefined;
  };
  const scraped: [string, string, () => number][] = [
    [
      'unrecorded_outcomes',
      'Deliveries whose record the store refused (with their route mails, kept copies and report history), held in memory and written again; above 0 a restart may repeat those mails.',
      () => options.unrecordedOutcomes?.() ?? 0,
    ],
    ['webhooks_in_flight', 'Webhooks received and not answered yet.', () => options.webhooksInFlight?.() ?? 0],
    [
      'smtp_paused',
      "1 while the queue's pause holds every delivery (mail server unreachable, 421, 429, repeated 4xx), else 0.",
      () => (paused() ? 1 : 0),
    ],
    [
      'smtp_paused_until_seconds',
      'While paused: when the next probe of the mail transport may go (Unix seconds; in the past while a probe is in flight); 0 when not paused.',
      () => (paused()?.openUntil ?? 0) / 1000,
    ],
  ];
  for (const [name, help, read] of scraped)
    new Gauge({
      name: `compliance_relay_${name}`,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  new Gauge({
    name: 'compliance_relay_smtp_held',
    help: '1, labelled with the failure code, while a configuration problem only an operator can fix holds the whole queue (a refused login, TLS); no series when not held.',
    labelNames: ['code'],
    registers,
    collect() {
      this.reset();
      const pause = paused();
      if (pause?.held && pause.lastError) this.set({ code: pause.lastError.code }, 1);
    },
  });
  for (const state of DELIVERY_STATES) depth.set({ state }, 0);
  return async () => {
    try {
      const { counts, oldestPendingAt } = await options.store.readQueue();
      for (const state of DELIVERY_STATES) depth.set({ state }, counts[state]);
      oldest.set(oldestPendingAt === null ? 0 : Math.max(0, (options.clock.now() - oldestPendingAt) / 1000));
    } catch (error) {
      scrapeErrors.inc();
      options.logger.warn({ err: error }, 'metrics: cannot read the queue from the store');
    }
  };
}

/** A bounded label for why a delivery was ignored (the reason text itself names arbitrary types). */
function classifyIgnored(reason: string): string {
  if (reason.startsWith('object type')) return 'OTHER_OBJECT_TYPE';
  if (reason.startsWith('event')) return 'OTHER_EVENT';
  return 'OTHER';
}

/** Waivers in force now, read at scrape time so every replica sharing a store reports the same figure. */
export function registerWaiverGauge(registry: Registry, options: { countActive: () => Promise<number>; logger: Logger }): void {
  new Gauge({
    name: 'compliance_relay_waivers_active',
    help: 'Accepted exceptions (waivers) in force now, stored and from WAIVERS_FILE.',
    registers: [registry],
    async collect() {
      try {
        this.set(await options.countActive());
      } catch (error) {
        options.logger.warn({ err: error }, 'metrics: cannot count the waivers in force');
      }
    },
  });
}

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueuePauseStatus, WorkerOutcome } from '../delivery';
import { DEFAULT_SOURCE_NAME, type WebhookOutcome } from '../webhook';
import { isFailureCode, type Clock, type FailureCatalogue, type Logger } from '../shared';
import { FAILURE_CATALOGUE } from '../notify';
import { DELIVERY_STATES, type Store } from '../store';

/** The relay's Prometheus series. One instance per relay: tests run several relays in one process. */
export interface RelayMetrics {
  readonly registry: Registry;
  recordWebhook(outcome: WebhookOutcome): void;
  recordWorker(outcome: WorkerOutcome): void;
  /** `reason`: an HTTP status such as `404`, or `timeout`, `network`, …; `source` absent: `default`. */
  recordNetboxFetchError(reason: string, source?: string): void;
  /** A route by owner mailed the whole report to its fallback: NetBox could not say who owns what. */
  recordOwnerFallback(reason: string, source?: string): void;
  /** Owner groups whose mails went without counts of their own (NetBox could not give the report's results). */
  recordOwnerGroupsUncounted(reason: string, groups: number, source?: string): void;
  /** The exposition text, with the queue gauges read from the store now. */
  render(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsOptions {
  store: Pick<Store, 'countByState' | 'oldestPendingAt'>;
  clock: Clock;
  logger: Logger;
  /** These three are read at scrape time. */
  unrecordedOutcomes?: () => number;
  webhooksInFlight?: () => number;
  smtpPause?: () => Pick<QueuePauseStatus, 'state' | 'openUntil' | 'held' | 'lastError'>;
  /** Process metrics (CPU, memory, event loop lag, GC): on by default. */
  processMetrics?: boolean;
  /** The configured NetBox source names: the only values of the `source` label (default: `default` alone). */
  sources?: readonly string[];
  /** The codes a failed send may be labelled with: the relay's own and its transports' (default: the built-in transports'). */
  failures?: FailureCatalogue;
}

/** What every series of the relay shares: its name's prefix and its own registry. */
function series(registry: Registry, name: string) {
  return { name: `compliance_relay_${name}`, registers: [registry] };
}

type TrafficSeries = ReturnType<typeof registerTrafficSeries>;
type QueueSeries = ReturnType<typeof registerQueueSeries>;

/**
 * The relay's metrics on its own Registry (never prom-client's global one). The queue gauges are read from
 * the store at scrape time, so every replica sharing a PostgreSQL store reports the same queue.
 */
export function createMetrics(options: MetricsOptions): RelayMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  // Registered in this order, which is the order of the exposition text.
  const traffic = registerTrafficSeries(registry, options.sources ?? [DEFAULT_SOURCE_NAME]);
  const queue = registerQueueSeries(registry, options);
  const labels = (reason: string, source?: string) => ({ reason: reason.slice(0, 40), source: traffic.sourceLabel(source) });
  return {
    registry,
    contentType: registry.contentType,
    recordWebhook: (outcome) => recordWebhookOutcome(traffic, outcome),
    recordWorker: (outcome) => recordWorkerOutcome(traffic, outcome, options.failures ?? FAILURE_CATALOGUE),
    recordNetboxFetchError: (reason, source) => traffic.netboxErrors.inc(labels(reason, source)),
    recordOwnerFallback: (reason, source) => traffic.ownerFallbacks.inc(labels(reason, source)),
    recordOwnerGroupsUncounted: (reason, groups, source) => traffic.ownerGroupsUncounted.inc(labels(reason, source), groups),
    async render() {
      await refreshQueue(queue, options);
      return registry.metrics();
    },
  };
}

/** Registers the webhook, send and NetBox series; the outcomes known in advance start at 0. */
function registerTrafficSeries(registry: Registry, sources: readonly string[]) {
  const received = new Counter({
    ...series(registry, 'deliveries_received_total'),
    help: 'Webhook requests by NetBox source and outcome: queued, duplicate, ignored (code = why), rejected (code = error code).',
    labelNames: ['outcome', 'code', 'source'] as const,
  });
  const sent = new Counter({
    ...series(registry, 'mails_sent_total'),
    help: 'Mails accepted by the mail transport (an SMTP server, Microsoft Graph, or written as .eml).',
  });
  const failed = new Counter({
    ...series(registry, 'mail_failures_total'),
    help: 'Failed send attempts by reason (SMTP_4XX, SMTP_5XX, ECONNECTION, EAUTH, TEMPLATE, …) and what followed (retry or dead).',
    labelNames: ['reason', 'then'] as const,
  });
  const latency = new Histogram({
    ...series(registry, 'send_duration_seconds'),
    help: "Time from claiming a delivery to the mail transport's answer (rendering included), by result.",
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  });
  const netboxErrors = new Counter({
    ...series(registry, 'netbox_fetch_errors_total'),
    help: 'Failed NetBox API calls by NetBox source and reason (HTTP status, timeout, network).',
    labelNames: ['reason', 'source'] as const,
  });
  const ownerFallbacks = new Counter({
    ...series(registry, 'owner_fallbacks_total'),
    help: 'Owner look-ups (routes by NetBox contacts) that failed, so the whole report went to the fallback addresses, by source and reason.',
    labelNames: ['reason', 'source'] as const,
  });
  const ownerGroupsUncounted = new Counter({
    ...series(registry, 'owner_groups_uncounted_total'),
    help: "Owner groups (routes by NetBox contacts) mailed without counts of their own, by source and reason: NetBox could not give the report's results, so each such mail says its counts are unavailable.",
    labelNames: ['reason', 'source'] as const,
  });
  sent.inc(0);
  // Reasons known in advance start at 0, so rate() works from the first failure on.
  for (const source of sources) for (const outcome of ['queued', 'duplicate'] as const) received.inc({ outcome, code: '', source }, 0);
  const known = new Set(sources);
  // Bounds the `source` label to the configured set.
  const sourceLabel = (source: string | undefined) => (source !== undefined && known.has(source) ? source : DEFAULT_SOURCE_NAME);
  return { received, sent, failed, latency, netboxErrors, ownerFallbacks, ownerGroupsUncounted, sourceLabel };
}

/** Registers the queue gauges (every state starts at 0), their scrape-error counter and the unrecorded-outcomes gauge. */
function registerQueueSeries(registry: Registry, options: MetricsOptions) {
  const scrapeErrors = new Counter({
    ...series(registry, 'store_scrape_errors_total'),
    help: 'Scrapes where the queue gauges could not be read from the store (they keep their last value).',
  });
  const depth = new Gauge({
    ...series(registry, 'queue_deliveries'),
    help: 'Deliveries in the outbox by state.',
    labelNames: ['state'] as const,
  });
  const oldest = new Gauge({
    ...series(registry, 'oldest_pending_delivery_age_seconds'),
    help: 'Age of the oldest delivery not yet sent nor dead (0 when none is pending).',
  });
  registerScrapeGauge(
    registry,
    'unrecorded_outcomes',
    'Deliveries whose record the store refused (with their route mails, kept copies and report history), held in memory and written again; above 0 a restart may repeat those mails.',
    () => options.unrecordedOutcomes?.() ?? 0,
  );
  registerScrapeGauge(registry, 'webhooks_in_flight', 'Webhooks received and not answered yet.', () => options.webhooksInFlight?.() ?? 0);
  const paused = () => {
    const pause = options.smtpPause?.();
    return pause && pause.state !== 'closed' ? pause : undefined;
  };
  registerScrapeGauge(
    registry,
    'smtp_paused',
    "1 while the queue's pause holds every delivery (mail server unreachable, 421, 429, repeated 4xx), else 0.",
    () => (paused() ? 1 : 0),
  );
  registerScrapeGauge(
    registry,
    'smtp_paused_until_seconds',
    'While paused: when the next probe of the mail transport may go (Unix seconds; in the past while a probe is in flight); 0 when not paused.',
    () => (paused()?.openUntil ?? 0) / 1000,
  );
  new Gauge({
    ...series(registry, 'smtp_held'),
    help: '1, labelled with the failure code, while a configuration problem only an operator can fix holds the whole queue (a refused login, TLS); no series when not held.',
    labelNames: ['code'],
    collect() {
      this.reset();
      const pause = paused();
      if (pause?.held && pause.lastError) this.set({ code: pause.lastError.code }, 1);
    },
  });
  for (const state of DELIVERY_STATES) depth.set({ state }, 0);
  return { scrapeErrors, depth, oldest };
}

function registerScrapeGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    ...series(registry, name),
    help,
    collect() {
      this.set(read());
    },
  });
}

function recordWebhookOutcome(traffic: TrafficSeries, outcome: WebhookOutcome): void {
  const source = traffic.sourceLabel(outcome.source);
  if (outcome.outcome === 'rejected') traffic.received.inc({ outcome: 'rejected', code: outcome.code, source });
  else if (outcome.outcome === 'ignored') traffic.received.inc({ outcome: 'ignored', code: classifyIgnored(outcome.reason), source });
  else traffic.received.inc({ outcome: outcome.outcome, code: '', source });
}

function recordWorkerOutcome(traffic: TrafficSeries, outcome: WorkerOutcome, failures: FailureCatalogue): void {
  const seconds = Math.max(0, outcome.durationMs) / 1000;
  if (outcome.type === 'sent') {
    // One delivery may mail several routes (ROUTES_FILE): count mails, not deliveries.
    traffic.sent.inc(outcome.routes.length);
    traffic.latency.observe({ result: 'sent' }, seconds);
    return;
  }
  if (outcome.type === 'suppressed') return;
  // A code of the closed catalogue only, so the series stay bounded (even for a code cast past the type).
  const reason = isFailureCode(outcome.failure.code, failures) ? outcome.failure.code : 'UNKNOWN';
  traffic.failed.inc({ reason, then: outcome.type });
  traffic.latency.observe({ result: 'failed' }, seconds);
}

/** Reads the queue gauges from the store; when it cannot, they keep their last value and the error is counted. */
async function refreshQueue(queue: QueueSeries, options: MetricsOptions): Promise<void> {
  try {
    const [counts, oldestAt] = await Promise.all([options.store.countByState(), options.store.oldestPendingAt()]);
    for (const state of DELIVERY_STATES) queue.depth.set({ state }, counts[state]);
    queue.oldest.set(oldestAt === null ? 0 : Math.max(0, (options.clock.now() - oldestAt) / 1000));
  } catch (error) {
    queue.scrapeErrors.inc();
    options.logger.warn({ err: error }, 'metrics: cannot read the queue from the store');
  }
}

/** A bounded label for why a delivery was ignored (the reason text itself names arbitrary types). */
function classifyIgnored(reason: string): string {
  if (reason.startsWith('object type')) return 'OTHER_OBJECT_TYPE';
  if (reason.startsWith('event')) return 'OTHER_EVENT';
  return 'OTHER';
}

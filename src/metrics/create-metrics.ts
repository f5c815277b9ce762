import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkerOutcome } from '../delivery';
import type { WebhookOutcome } from '../webhook';
import { isFailureCode, type Clock, type FailureCode, type Logger } from '../shared';
import { DELIVERY_STATES, type Store } from '../store';

/** The relay's Prometheus series. One instance per relay: tests run several relays in one process. */
export interface RelayMetrics {
  readonly registry: Registry;
  /** Counts one webhook request by outcome (rejections by error code). */
  recordWebhook(outcome: WebhookOutcome): void;
  /** Counts one send attempt and observes its duration. */
  recordWorker(outcome: WorkerOutcome): void;
  /** Counts one failed NetBox API call (`reason`: an HTTP status such as `404`, or `timeout`, `network`, …). */
  recordNetboxFetchError(reason: string): void;
  /** The exposition text, with the queue gauges read from the store now. */
  render(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsOptions {
  store: Pick<Store, 'countByState' | 'oldestPendingAt'>;
  clock: Clock;
  logger: Logger;
  /** Outcomes of sends waiting to be recorded (the store refused them), read at scrape time. */
  unrecordedOutcomes?: () => number;
  /** Process metrics (CPU, memory, event loop lag, GC): on by default. */
  processMetrics?: boolean;
}

const PREFIX = 'compliance_relay_';

/**
 * Builds the relay's metrics on its own Registry (never prom-client's global one). Counters move
 * with each request and send; queue depth and the oldest pending delivery's age are read from the
 * store at scrape time, so every replica sharing a PostgreSQL store reports the same queue.
 */
export function createMetrics(options: MetricsOptions): RelayMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });

  const received = new Counter({
    name: `${PREFIX}deliveries_received_total`,
    help: 'Webhook requests by outcome: queued, duplicate, ignored (code = why), rejected (code = error code).',
    labelNames: ['outcome', 'code'] as const,
    registers: [registry],
  });
  const sent = new Counter({ name: `${PREFIX}mails_sent_total`, help: 'Mails accepted by the SMTP server (or written as .eml).', registers: [registry] });
  const failed = new Counter({
    name: `${PREFIX}mail_failures_total`,
    help: 'Failed send attempts by reason (SMTP_4XX, SMTP_5XX, ECONNECTION, EAUTH, TEMPLATE, …) and what followed (retry or dead).',
    labelNames: ['reason', 'then'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: `${PREFIX}send_duration_seconds`,
    help: 'Time from claiming a delivery to the SMTP answer (rendering included), by result.',
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const netboxErrors = new Counter({
    name: `${PREFIX}netbox_fetch_errors_total`,
    help: 'Failed NetBox API calls by reason (HTTP status, timeout, network).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const scrapeErrors = new Counter({
    name: `${PREFIX}store_scrape_errors_total`,
    help: 'Scrapes where the queue gauges could not be read from the store (they keep their last value).',
    registers: [registry],
  });
  const depth = new Gauge({ name: `${PREFIX}queue_deliveries`, help: 'Deliveries in the outbox by state.', labelNames: ['state'] as const, registers: [registry] });
  const oldest = new Gauge({
    name: `${PREFIX}oldest_pending_delivery_age_seconds`,
    help: 'Age of the oldest delivery not yet sent nor dead (0 when none is pending).',
    registers: [registry],
  });
  new Gauge({
    name: `${PREFIX}unrecorded_outcomes`,
    help: 'Outcomes of sends (and report history entries) the store refused, held in memory and retried; above 0 a restart may repeat those mails.',
    registers: [registry],
    collect() {
      this.set(options.unrecordedOutcomes?.() ?? 0);
    },
  });
  for (const state of DELIVERY_STATES) depth.set({ state }, 0);
  sent.inc(0);
  // Reasons known in advance start at 0, so rate() works from the first failure on.
  for (const outcome of ['queued', 'duplicate'] as const) received.inc({ outcome, code: '' }, 0);

  const refreshQueue = async (): Promise<void> => {
    try {
      const [counts, oldestAt] = await Promise.all([options.store.countByState(), options.store.oldestPendingAt()]);
      for (const state of DELIVERY_STATES) depth.set({ state }, counts[state]);
      oldest.set(oldestAt === null ? 0 : Math.max(0, (options.clock.now() - oldestAt) / 1000));
    } catch (error) {
      scrapeErrors.inc();
      options.logger.warn({ err: error }, 'metrics: cannot read the queue from the store');
    }
  };

  return {
    registry,
    contentType: registry.contentType,
    recordWebhook(outcome) {
      if (outcome.outcome === 'rejected') received.inc({ outcome: 'rejected', code: outcome.code });
      else if (outcome.outcome === 'ignored') received.inc({ outcome: 'ignored', code: classifyIgnored(outcome.reason) });
      else received.inc({ outcome: outcome.outcome, code: '' });
    },
    recordWorker(outcome) {
      const seconds = Math.max(0, outcome.durationMs) / 1000;
      if (outcome.type === 'sent') {
        // One delivery may mail several routes (ROUTES_FILE): count mails, not deliveries.
        sent.inc(outcome.routes.length);
        latency.observe({ result: 'sent' }, seconds);
        return;
      }
      if (outcome.type === 'suppressed') return;
      failed.inc({ reason: buildFailureLabel(outcome.failure.code), then: outcome.type });
      latency.observe({ result: 'failed' }, seconds);
    },
    recordNetboxFetchError(reason) {
      netboxErrors.inc({ reason: reason.slice(0, 40) });
    },
    async render() {
      await refreshQueue();
      return registry.metrics();
    },
  };
}

/**
 * The `reason` label of a failed send: a code of the closed FAILURE_CATALOGUE only, so the series
 * stay bounded. The type already says so; the check keeps a code cast past it out of the labels too.
 */
function buildFailureLabel(code: FailureCode): FailureCode {
  return isFailureCode(code) ? code : 'UNKNOWN';
}

/** A bounded label for why a delivery was ignored (the reason text itself names arbitrary types). */
function classifyIgnored(reason: string): string {
  if (reason.startsWith('object type')) return 'OTHER_OBJECT_TYPE';
  if (reason.startsWith('event')) return 'OTHER_EVENT';
  return 'OTHER';
}

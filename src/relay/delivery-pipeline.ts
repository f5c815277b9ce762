import { TRANSPORT_CHECK_INTERVAL_MS, type Config, type SourceConfig } from '../config';
import { DEFAULT_SOURCE_NAME, type WebhookOutcome } from '../webhook';
import { createNetboxClient, type NetboxClient } from '../netbox';
import { createOwnerResolver } from '../enrichment';
import {
  createNoticeComposer,
  createReportComposer,
  createReportInsights,
  type ReportComposer,
  type ReportInsightsOptions,
} from '../compose';
import { createBatchHistory, createWorker, type BatchItem, type Composers } from '../delivery';
import { type Renderer } from '../mail';
import type { Notifier, TransportDescriptor } from '../notify';
import type { ActivityCounter, Clock, FailureCatalogue, Logger } from '../shared';
import { createTransportHealth } from '../health';
import { createMetrics, type RelayMetrics } from '../metrics';
import { createWaiverBook, type WaiverBook } from '../waivers';
import { createDigestComposer } from '../digest';
import { type Store } from '../store';
import type { ReportHistory } from '../trend';
import { buildNoticeRecipients, createRoutePlanner, type Route } from '../routing';

/** The world as the relay sees it: injected so that tests run the real thing in-process. */
export interface RelayIo {
  clock: Clock;
  logger: Logger;
  readFile: (file: string) => Buffer;
  random?: () => number;
  onWorkerOutcome?: (item: BatchItem) => void;
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
  /** Waits (the dashboard's slowed-down failed logins); absent: a real timer. Injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The transports mails may go through; absent: the relay's own (notify's TRANSPORTS). */
  transports?: readonly TransportDescriptor[];
}

/** A source's NetBox client: its own URL, token and CA, so a source's token only ever goes to its own NetBox. */
export function createSourceNetboxClient(
  config: Config,
  source: SourceConfig,
  io: Pick<RelayIo, 'clock' | 'readFile'>,
  options: { maxAttempts?: number } = {},
): NetboxClient {
  return createNetboxClient({
    url: source.netbox.url!,
    token: source.netbox.token,
    ca: source.netbox.caFile ? io.readFile(source.netbox.caFile) : undefined,
    timeoutMs: config.netbox.timeoutMs,
    clock: io.clock,
    proxy: config.proxy,
    ...options,
  });
}

/** What the mail side is built on: createRelay builds them first (`failures` for the mails, the metrics and the dashboard alike). */
interface PipelineDeps {
  store: Store;
  renderer: Renderer;
  notifier: Notifier;
  netbox: Map<string, NetboxClient>;
  webhooksInFlight: ActivityCounter;
  failures: FailureCatalogue;
  waivers: WaiverBook;
}

/** The mail side: metrics, the mail transport's health, the composers and the worker that runs them. */
export function createDeliveryPipeline(config: Config, io: RelayIo, deps: PipelineDeps) {
  const { store, notifier } = deps;
  const metrics = createMetrics({
    ...io,
    store,
    unrecordedOutcomes: () => worker.unrecorded.count,
    webhooksInFlight: () => deps.webhooksInFlight.active,
    // The worker is built below; the gauges are read only at scrape time.
    pause: () => worker.breaker,
    sources: config.sources.map((s) => s.name),
    failures: deps.failures,
  });
  const transportHealth = createTransportHealth({
    ...io,
    notifier,
    failures: deps.failures,
    intervalMs: TRANSPORT_CHECK_INTERVAL_MS,
    held: () => worker.breaker.held && worker.breaker.state !== 'closed',
  });
  const history = createBatchHistory(store);
  const worker = createWorker({
    ...io,
    ...config.worker,
    sourceCount: config.sources.length,
    store,
    notifier,
    composers: createRelayComposers(config, io, { ...deps, history, metrics }),
    history,
    planRoutes: createRoutePlanner({ ...io, routes: config.routing.routes, store, sources: config.sources, metrics }),
    retry: config.retry,
    failures: deps.failures,
    observe: (item, durationMs) => {
      metrics.recordWorker(item, durationMs);
      transportHealth.record(item);
      io.onWorkerOutcome?.(item);
    },
  });
  return { worker, metrics, transportHealth };
}

/** The accepted exceptions of this configuration (stored ones and WAIVERS_FILE's) on this store: the app, the dashboard and the CLI share it. */
export function createRelayWaiverBook(config: Config, io: Pick<RelayIo, 'clock' | 'logger'>, store: Store): WaiverBook {
  return createWaiverBook({ ...io, storage: store, fileWaivers: config.waivers.fileWaivers, sources: config.sources.map((s) => s.name) });
}

/** A source's report composer as the worker runs it, so `preview` shows the mail sent; `routes` narrows it (names unchanged). */
export function createRelayReportComposer(
  config: Config,
  io: Pick<RelayIo, 'clock'>,
  deps: Pick<ReportInsightsOptions, 'history' | 'stored' | 'onNetboxError'> & {
    renderer: Renderer;
    source: SourceConfig;
    netbox?: NetboxClient;
    routes?: readonly Route[];
    waivers?: WaiverBook;
  },
): ReportComposer {
  const { source } = deps;
  return createReportComposer({
    ...io,
    ...deps,
    mail: config.mail,
    routes: deps.routes ?? config.routing.routes,
    implicitRoute: config.routing.file === undefined,
    netboxUrl: source.netbox.url,
    source: config.sources.length > 1 ? { name: source.name, isDefault: source.name === DEFAULT_SOURCE_NAME } : undefined,
    relayUrl: config.relayUrl,
    insights: createReportInsights({
      ...io,
      ...deps,
      client: deps.netbox,
      netboxUrl: source.netbox.url,
      budgetMs: config.netbox.enrichBudgetMs,
      waivers: deps.waivers && ((options) => deps.waivers!.forReport(options)),
    }),
    // Owners are asked of the source's own NetBox with its own token, within the same budget per look-up.
    owners: deps.netbox?.hasToken
      ? createOwnerResolver({ client: deps.netbox, budgetMs: config.netbox.enrichBudgetMs, clock: io.clock })
      : undefined,
  });
}

/** The digest composer exactly as the worker runs it, so that `preview --digest`'s mail is the one the relay sends. */
export function createRelayDigestComposer(
  config: Config,
  io: Pick<RelayIo, 'clock'>,
  deps: { store: Store; renderer: Renderer; waivers: WaiverBook },
) {
  return createDigestComposer({
    store: deps.store,
    renderer: deps.renderer,
    sources: config.sources.map((s) => ({ name: s.name, tags: s.tags, netboxUrl: s.netbox.url })),
    waivers: (source) => deps.waivers.list({ source }),
    routes: config.routing.routes,
    from: config.mail.from,
    defaultTimezone: config.mail.timezone,
    clock: io.clock,
  });
}

/** The configured source a delivery came from; a source no longer configured gets no NetBox (so no other source's token goes to it). */
export function findDeliverySource(config: Config, name: string): SourceConfig {
  return (
    config.sources.find((s) => s.name === name) ?? { name, path: '', secrets: [], netbox: {}, tags: {}, catchUp: { everyMs: null, max: 0 } }
  );
}

/** The composer of each kind of delivery: reports (with each source's NetBox failures, the CSV and the trend), digests, the watchdog's notices. */
function createRelayComposers(
  config: Config,
  io: RelayIo,
  deps: PipelineDeps & { metrics: RelayMetrics; history: ReportHistory },
): Composers {
  const composerFor = (source: SourceConfig) =>
    createRelayReportComposer(config, io, {
      renderer: deps.renderer,
      source,
      netbox: deps.netbox.get(source.name),
      history: deps.history,
      waivers: deps.waivers,
      onNetboxError: (code) => deps.metrics.recordNetboxFetchError(code, source.name),
    });
  const composers = new Map(config.sources.map((source) => [source.name, composerFor(source)]));
  const of = (source: string) => composers.get(source) ?? composerFor(findDeliverySource(config, source));
  const report: ReportComposer = {
    compose: (delivery, log) => of(delivery.source).compose(delivery, log),
    render: (composed, route) => of(composed.delivery.source).render(composed, route),
  };
  // The watchdog's notices go to everyone who expects reports: MAIL_TO/CC/BCC, or every route's recipients.
  const recipients = buildNoticeRecipients(config.routing.routes);
  const watchdog = createNoticeComposer({ ...config.mail, renderer: deps.renderer, recipients, clock: io.clock });
  return { report, digest: createRelayDigestComposer(config, io, deps), watchdog };
}

import type { Express, RequestHandler } from 'express';
import { DEFAULT_SOURCE_NAME, describeUnsignedWebhook, listBootWarnings, planCatchUp, type Config, type SourceConfig } from './config';
import { createNetboxClient, type NetboxClient } from './netbox';
import { createOwnerResolver } from './enrichment';
import {
  createReportComposer,
  createReportInsights,
  CHART_REPORTS,
  CSV_ATTACHMENT_MAX_BYTES,
  MAX_FAILING_TESTS_LISTED,
  verifyRouteTemplates,
  type ReportComposer,
  type ReportInsightsOptions,
} from './compose';
import { createBatchHistory, createWorker, type Composers, type Worker, type WorkerOutcome } from './delivery';
import { createApp } from './http';
import { defaultTemplatesDir, loadRenderer, type Renderer } from './mail';
import { buildFailureCatalogue, createNotifier, type Notifier, type TransportDescriptor } from './notify';
import { checkReadiness, createSmtpHealth, type SmtpHealth } from './health';
import type * as DashboardModule from './dashboard';
import { createMetrics, registerWaiverGauge, type RelayMetrics } from './metrics';
import { createWaiverBook, type WaiverBook } from './waivers';
import { createWatchdog, createWatchdogComposer, type Watchdog } from './watchdog';
import { createDigestComposer, createDigestScheduler, type DigestScheduler } from './digest';
import { createSourceCatchUps, type SourceCatchUps } from './catch-up';
import type { WebhookOutcome } from './webhook';
import { createActivityCounter, createAuthThrottle, type ActivityCounter, type Clock, type FailureCatalogue, type Logger } from './shared';
import { createRetention, openStore, StorageUnavailableError, type Retention, type Store } from './store';
import type { ReportHistory } from './trend';
import { buildNoticeRecipients, createRoutePlanner, type Route } from './routing';

/** The world as the relay sees it: injected so that tests run the real thing in-process. */
export interface RelayIo {
  clock: Clock;
  logger: Logger;
  readFile: (file: string) => Buffer;
  random?: () => number;
  onWorkerOutcome?: (event: WorkerOutcome) => void;
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
  /** Waits (the dashboard's slowed-down failed logins); absent: a real timer. Injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The transports mails may go through; absent: the relay's own (notify's TRANSPORTS). */
  transports?: readonly TransportDescriptor[];
}

/** One relay: its parts, the app, and its start and stop. */
export interface Relay extends Omit<RelayParts, 'netbox' | 'webhooksInFlight'> {
  app: Express;
  /** Releases what a previous process left in flight and starts the worker and the timers. */
  start(): Promise<void>;
  /** Stops the worker (waiting for sends in flight up to the bound), then closes SMTP, NetBox and the store. */
  stop(): Promise<void>;
}

/** The templates shipped with the package (defined in mail/, where the command line finds it without loading the relay). */
export { defaultTemplatesDir } from './mail';

/**
 * Builds the whole relay from a validated config: store, renderer (templates compiled and checked
 * against a sample report now, so a broken template stops the start), notifier, worker and app.
 * Nothing listens and no timer runs until `start()` and the caller's `listen`.
 */
export function createRelay(config: Config, io: RelayIo): Relay {
  for (const w of listBootWarnings(config)) io.logger.warn(w.fields, w.message);
  const renderer = loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir());
  verifyRouteTemplates(renderer, { ...config, netbox: config.sources[0].netbox });
  const store = openStore(config.store, {
    onIdleError: (error) => io.logger.warn({ err: error.message }, 'a pooled PostgreSQL connection failed; it will be replaced'),
  });
  const notifier = createNotifier(config.transport, { readFile: io.readFile, clock: io.clock, proxy: config.proxy }, io.transports);
  const netbox = createRelayNetboxClients(config, io);
  // The webhooks being answered, for the metrics.
  const webhooksInFlight = createActivityCounter();
  const shared = { failures: buildFailureCatalogue(io.transports), waivers: createRelayWaiverBook(config, io, store) };
  const delivery = createDeliveryPipeline(config, io, { store, renderer, notifier, netbox, webhooksInFlight, ...shared });
  const kick = () => delivery.worker.kick();
  const watchdog = createSourceWatchdogs(config, io, { store, onQueued: kick });
  const digests = createDigestScheduler({
    store,
    clock: io.clock,
    logger: io.logger,
    routes: config.routing.routes,
    defaultTimezone: config.mail.timezone,
    onQueued: kick,
  });
  warnAboutDigestRetention(config, digests, io.logger);
  const { registry } = delivery.metrics;
  const catchUps = createSourceCatchUps(config, { ...io, store, netbox, registry, owner: delivery.worker.owner, onQueued: kick });
  const app = createRelayApp(config, io, { store, renderer, watchdog, digests, webhooksInFlight, ...delivery, ...shared });
  const retention = createRetention({
    store,
    clock: io.clock,
    logger: io.logger,
    days: config.retention.days,
    intervalMs: config.retention.intervalMs,
  });
  const parts = { store, renderer, notifier, netbox, watchdog, digests, catchUps, retention, webhooksInFlight, ...delivery };
  let stopped = false;
  return {
    ...parts,
    app,
    start: () => startRelay(parts, io),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopRelay(parts, config, io);
    },
  };
}

/** Built once at start for the mails, the metrics and the dashboard alike. */
interface SharedParts {
  failures: FailureCatalogue;
  waivers: WaiverBook;
}

/** What createRelay builds before the app, and what start and stop act on. */
interface RelayParts {
  store: Store;
  renderer: Renderer;
  notifier: Notifier;
  netbox: Map<string, NetboxClient>;
  worker: Worker;
  metrics: RelayMetrics;
  smtpHealth: SmtpHealth;
  watchdog?: Watchdog;
  digests: DigestScheduler;
  catchUps: SourceCatchUps;
  retention: Retention;
  webhooksInFlight: ActivityCounter;
}

/** The NetBox clients for enrichment: one per source with a NetBox URL, so a source's token only ever goes to its own NetBox. */
export function createRelayNetboxClients(config: Config, io: Pick<RelayIo, 'clock' | 'readFile'>): Map<string, NetboxClient> {
  return new Map(config.sources.filter((s) => s.netbox.url).map((source) => [source.name, createSourceNetboxClient(config, source, io)]));
}

/** The NetBox client of one source that has a NetBox URL: its URL, token and CA, on the relay's clock and timeout. */
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

/** The watchdogs of the sources that expect reports (EXPECT_REPORT_EVERY, `expect_report_every`), run as one; undefined when none does. */
function createSourceWatchdogs(config: Config, io: RelayIo, deps: { store: Store; onQueued: () => void }): Watchdog | undefined {
  const watchdogs = config.sources
    .filter((source) => source.expectEveryMs !== undefined)
    .map((source) =>
      createWatchdog({
        store: deps.store,
        clock: io.clock,
        logger: io.logger,
        expectEveryMs: source.expectEveryMs!,
        onQueued: deps.onQueued,
        source: source.name === DEFAULT_SOURCE_NAME ? undefined : source.name,
        catchUp: planCatchUp(source).on,
      }),
    );
  if (watchdogs.length <= 1) return watchdogs[0];
  return {
    // Every source is measured; the first notice queued (if any) is what this evaluation did.
    evaluate: async () => (await Promise.all(watchdogs.map((w) => w.evaluate()))).find((r) => r !== undefined),
    start: () => watchdogs.forEach((w) => w.start()),
    stop: () => watchdogs.forEach((w) => w.stop()),
  };
}

/** The mail side: metrics, SMTP health, the composers and the worker that runs them. */
function createDeliveryPipeline(
  config: Config,
  io: RelayIo,
  deps: Pick<RelayParts, 'store' | 'renderer' | 'notifier' | 'netbox' | 'webhooksInFlight'> & SharedParts,
): Pick<RelayParts, 'worker' | 'metrics' | 'smtpHealth'> {
  const { clock, logger } = io;
  const { store, notifier } = deps;
  const metrics = createMetrics({
    store,
    clock,
    logger,
    unrecordedOutcomes: () => worker.unrecorded.count,
    webhooksInFlight: () => deps.webhooksInFlight.active,
    // The worker is built below; the gauges are read only at scrape time.
    smtpPause: () => worker.breaker,
    sources: config.sources.map((s) => s.name),
    failures: deps.failures,
  });
  const smtpHealth = createSmtpHealth({
    notifier,
    clock,
    logger,
    intervalMs: config.observe.smtpCheckIntervalMs,
    held: () => worker.breaker.held && worker.breaker.state !== 'closed',
  });
  // The trend's history: what a batch composes is written by its settle.
  const history = createBatchHistory(store);
  const worker = createWorker({
    store,
    notifier,
    composers: createRelayComposers(config, io, { ...deps, history, metrics }),
    history,
    planRoutes: createRoutePlanner({
      routes: config.routing.routes,
      store,
      sources: config.sources,
      onOwnerFallback: (source, code) => metrics.recordOwnerFallback(code, source),
      onRecipientsRefused: (route, refused) =>
        logger.warn({ route, refused }, `route ${route}: NetBox names contacts the route may not mail; their failures go to its fallback`),
      onGroupsUncounted: ({ source, route, groups, code, reason }) => {
        logger.warn(
          { source, route, groups, code, reason },
          `route ${route}: ${groups} owner group(s) without counts of their own (${reason}); their mails say so`,
        );
        metrics.recordOwnerGroupsUncounted(code, groups, source);
      },
    }),
    clock,
    logger,
    retry: config.retry,
    concurrency: config.worker.concurrency,
    pollMs: config.worker.pollMs,
    leaseMs: config.worker.leaseMs,
    pauseAfter4xx: config.worker.pauseAfter4xx,
    random: io.random,
    observe: (outcome) => {
      metrics.recordWorker(outcome);
      smtpHealth.record(outcome);
      io.onWorkerOutcome?.(outcome);
    },
  });
  return { worker, metrics, smtpHealth };
}

/** The accepted exceptions of this configuration (stored ones and WAIVERS_FILE's) on this store: the app, the dashboard and the CLI share it. */
export function createRelayWaiverBook(config: Config, io: Pick<RelayIo, 'clock' | 'logger'>, store: Store): WaiverBook {
  return createWaiverBook({
    storage: store,
    fileWaivers: config.waivers.fileWaivers,
    sources: config.sources.map((s) => s.name),
    clock: io.clock,
    logger: io.logger,
  });
}

/**
 * One NetBox source's report composer exactly as the worker runs it, so that `preview`'s mail is the one
 * the relay sends. `routes` narrows it to some routes (their names, hence Message-IDs, unchanged).
 */
export function createRelayReportComposer(
  config: Config,
  io: Pick<RelayIo, 'clock' | 'logger'>,
  deps: Pick<ReportInsightsOptions, 'history' | 'storedFailures' | 'storedStates' | 'onNetboxError'> & {
    renderer: Renderer;
    source: SourceConfig;
    netbox?: NetboxClient;
    routes?: readonly Route[];
    /** The accepted exceptions the mails leave out and list; absent: none. */
    waivers?: WaiverBook;
  },
): ReportComposer {
  const { source } = deps;
  const isDefault = source.name === DEFAULT_SOURCE_NAME;
  const routes = deps.routes ?? config.routing.routes;
  return createReportComposer({
    renderer: deps.renderer,
    clock: io.clock,
    from: config.mail.from,
    routes,
    implicitRoute: config.routing.file === undefined,
    timezone: config.mail.timezone,
    netboxUrl: source.netbox.url,
    source: config.sources.length > 1 ? { name: source.name, isDefault } : undefined,
    insights: createReportInsights({
      client: deps.netbox,
      hasToken: source.netbox.token !== undefined,
      netboxUrl: source.netbox.url,
      budgetMs: config.netbox.enrichBudgetMs,
      clock: io.clock,
      history: deps.history,
      storedFailures: deps.storedFailures,
      storedStates: deps.storedStates,
      timezone: config.mail.timezone,
      maxFailures: MAX_FAILING_TESTS_LISTED,
      // Built once per report when some route attaches it; each route's mail then carries it or not.
      attachCsv: routes.some((r) => r.attach_csv === true),
      attachMaxBytes: CSV_ATTACHMENT_MAX_BYTES,
      chartReports: CHART_REPORTS,
      logger: isDefault ? io.logger : io.logger.child({ source: source.name }),
      onNetboxError: deps.onNetboxError,
      waivers: deps.waivers && ((options) => deps.waivers!.forReport(options)),
      relayUrl: config.relayUrl,
    }),
    // Owners are asked of the source's own NetBox with its own token, within the same budget per look-up.
    owners:
      deps.netbox && source.netbox.token !== undefined
        ? createOwnerResolver({ client: deps.netbox, budgetMs: config.netbox.enrichBudgetMs, clock: io.clock })
        : undefined,
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
  deps: Pick<RelayParts, 'store' | 'renderer' | 'netbox' | 'metrics'> & { history: ReportHistory; waivers: WaiverBook },
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
    compose: (delivery, log) => of(delivery.netboxSource).compose(delivery, log),
    render: (composed, route) => of(composed.netboxSource).render(composed, route),
  };
  // The watchdog's notices go to everyone who expects reports: MAIL_TO/CC/BCC, or every route's recipients.
  const recipients = buildNoticeRecipients(config.routing.routes);
  const watchdog = createWatchdogComposer({ from: config.mail.from, recipients, timezone: config.mail.timezone, clock: io.clock });
  const digest = createDigestComposer({
    store: deps.store,
    sources: config.sources.map((s) => ({ name: s.name, tags: s.tags, netboxUrl: s.netbox.url })),
    waivers: (source) => deps.waivers.list({ source }),
    renderer: deps.renderer,
    routes: config.routing.routes,
    from: config.mail.from,
    defaultTimezone: config.mail.timezone,
    clock: io.clock,
  });
  return { report, digest, watchdog };
}

/** The HTTP side: webhook, admin API, dashboard, health and metrics (createApp never listens). */
function createRelayApp(
  config: Config,
  io: RelayIo,
  parts: Omit<RelayParts, 'notifier' | 'netbox' | 'retention' | 'catchUps'> & SharedParts,
): Express {
  const { clock, logger } = io;
  const { store, worker, metrics, watchdog, waivers } = parts;
  registerWaiverGauge(metrics.registry, { countActive: () => waivers.countActive(), logger });
  // One count of wrong admin tokens per address, whether tried at the dashboard's login or the admin API.
  const authThrottle = createAuthThrottle();
  return createApp({
    config,
    store,
    clock,
    authThrottle,
    sleep: io.sleep,
    logger,
    waivers,
    onQueued: () => {
      worker.kick();
      // A report that ends a silence is announced at once, not at the next check.
      if (watchdog) void watchdog.evaluate().catch((error: unknown) => logger.error({ err: error }, 'watchdog: evaluation failed'));
    },
    onRequeued: () => worker.kick(),
    tryNow: () => worker.tryNow(),
    webhooksInFlight: parts.webhooksInFlight,
    onWebhookOutcome: (outcome) => {
      metrics.recordWebhook(outcome);
      io.onWebhookOutcome?.(outcome);
    },
    dashboard: createLazyDashboard(() => ({
      adminToken: config.admin.token,
      store,
      clock,
      logger,
      timezone: config.mail.timezone,
      failures: parts.failures,
      netboxUrl: config.sources[0].netbox.url,
      routeNames: config.routing.routes.map((r) => r.name),
      sources: config.sources,
      onRequeued: () => worker.kick(),
      unrecordedOutcomes: () => worker.unrecorded.count,
      smtpPause: () => worker.breaker,
      tryNow: () => worker.tryNow(),
      mailStatus: () => parts.smtpHealth.status(),
      digests: { schedules: () => parts.digests.schedules(), periods: (options) => store.listDigestPeriods(options) },
      notices: config.webhook.unsignedFromNetwork ? [describeUnsignedWebhook(config)!] : [],
      throttle: authThrottle,
      sleep: io.sleep,
      waivers,
    })),
    observe: {
      readiness: () =>
        checkReadiness({
          store,
          renderer: parts.renderer,
          smtp: parts.smtpHealth,
          pause: () => worker.breaker,
          clock,
          unrecorded: () => worker.unrecorded,
        }),
      metrics,
      metricsToken: config.observe.metricsToken,
      adminToken: config.admin.token,
    },
  });
}

/** The dashboard, built by its first request: a relay nobody browses never loads its pages' code. */
function createLazyDashboard(options: () => DashboardModule.DashboardOptions): RequestHandler {
  let dashboard: RequestHandler | undefined;
  return (req, res, next) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (above)
    dashboard ??= (require('./dashboard') as typeof DashboardModule).createDashboardRouter(options());
    dashboard(req, res, next);
  };
}

async function startRelay(parts: RelayParts, io: RelayIo): Promise<void> {
  const { store } = parts;
  try {
    const migration = await store.migrate();
    // One line: the names of what was applied are for `migrate`, not for every first start.
    const applied = migration.applied.length;
    if (applied > 0)
      io.logger.info({ version: migration.version, applied }, `store schema migrated to version ${migration.version} (${applied} applied)`);
    // Only a single-owner store (SQLite) may release every lease: what was "sending" when it last
    // stopped was interrupted. Replicas sharing PostgreSQL leave live leases alone; a dead replica's
    // claims come back when their lease expires.
    if (store.singleOwner) {
      const released = await store.releaseLeases(io.clock.now());
      if (released > 0) io.logger.warn({ released }, 'resuming deliveries that were being sent when the relay last stopped');
    }
  } catch (error) {
    // Storage is unusable right now: start anyway (the webhook answers 503 until it is back); the
    // leases left behind expire and those deliveries are sent then.
    if (!(error instanceof StorageUnavailableError)) throw error;
    io.logger.error({ code: error.code, err: error.message }, 'the outbox is not usable at start; answering 503 until it is');
  }
  parts.worker.start();
  parts.retention.start();
  parts.smtpHealth.start();
  parts.watchdog?.start();
  parts.digests.start();
  parts.catchUps.start();
}

async function stopRelay(parts: RelayParts, config: Config, io: RelayIo): Promise<void> {
  const { worker } = parts;
  parts.retention.stop();
  parts.smtpHealth.stop();
  parts.watchdog?.stop();
  parts.digests.stop();
  const catchUpsStopped = parts.catchUps.stop();
  // The batch in flight gets the bound to be sent and recorded; a mail sent but not recorded by then is logged with its Message-ID.
  const drained = await worker.stop(config.http.shutdownTimeoutMs);
  if (!drained)
    io.logger.warn(
      { inFlight: worker.inFlight },
      'shutdown bound reached with a batch in flight: its deliveries will be tried again at the next start',
    );
  await parts.notifier.close();
  for (const client of parts.netbox.values()) client.close();
  // A catch-up in flight ends (its NetBox requests cut) and gives its lease back before the store closes.
  await catchUpsStopped;
  await parts.store.close();
}

/** A digest reads its period's reports from the outbox, which RETENTION_DAYS prunes: a longer period loses its first reports. */
function warnAboutDigestRetention(config: Config, digests: DigestScheduler, logger: Logger): void {
  const keptMs = config.retention.days * 86_400_000;
  if (keptMs <= 0) return;
  for (const s of digests.schedules()) {
    if (s.nextPeriodMs !== null && s.nextPeriodMs > keptMs)
      logger.warn(
        { route: s.route, schedule: s.schedule, retentionDays: config.retention.days },
        `digest route ${s.route}: its periods are longer than RETENTION_DAYS, so reports pruned before its tick are missing from its digest; raise RETENTION_DAYS`,
      );
  }
}

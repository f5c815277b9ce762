import type { Express } from 'express';
import { describeUnsignedWebhook, listBootWarnings, planCatchUp, type Config } from '../config';
import { createApp } from '../http';
import { checkReadiness } from '../health';
import { createDashboardRouter } from '../dashboard';
import { registerWaiverGauge } from '../metrics';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { verifyRouteTemplates } from '../compose';
import { loadRenderer } from '../mail';
import { buildFailureCatalogue, createNotifier } from '../notify';
import { createWatchdog, type Watchdog } from '../watchdog';
import { createDigestScheduler, type DigestScheduler } from '../digest';
import { createSourceCatchUps } from '../catch-up';
import { createActivityCounter, createAuthThrottle, type Logger } from '../shared';
import { createRetention, openStore, StorageUnavailableError, type Store } from '../store';
import { createDeliveryPipeline, createRelayWaiverBook, createSourceNetboxClient, type RelayIo } from './delivery-pipeline';

export type Relay = Awaited<ReturnType<typeof createRelay>>;

type RelayParts = Omit<Relay, 'app' | 'start' | 'stop'>;

/** Builds the relay from a validated config (a broken template stops it now); nothing runs until `start()` and `listen`. */
export async function createRelay(config: Config, io: RelayIo) {
  for (const w of listBootWarnings(config, io.transports)) io.logger.warn(w.fields, w.message);
  const renderer = loadRenderer(config.mail.templatesDir);
  await verifyRouteTemplates(renderer, { ...config, netbox: config.sources[0].netbox });
  const store = openStore(config.store, {
    onIdleError: (error) => io.logger.warn({ err: error.message }, 'a pooled PostgreSQL connection failed; it will be replaced'),
  });
  const notifier = createNotifier(config.transport, { readFile: io.readFile, clock: io.clock, proxy: config.proxy }, io.transports);
  // For enrichment: one client per source with a NetBox URL.
  const netbox = new Map(config.sources.filter((s) => s.netbox.url).map((s) => [s.name, createSourceNetboxClient(config, s, io)]));
  const webhooksInFlight = createActivityCounter();
  const shared = { failures: buildFailureCatalogue(io.transports), waivers: createRelayWaiverBook(config, io, store) };
  const delivery = createDeliveryPipeline(config, io, { store, renderer, notifier, netbox, webhooksInFlight, ...shared });
  const kick = () => delivery.worker.kick();
  const watchdog = createSourceWatchdogs(config, io, { store, onQueued: kick });
  const digests = createDigestScheduler({
    ...io,
    store,
    routes: config.routing.routes,
    defaultTimezone: config.mail.timezone,
    onQueued: kick,
  });
  warnAboutDigestRetention(config, digests, io.logger);
  const { registry } = delivery.metrics;
  const catchUps = createSourceCatchUps(config, { ...io, store, netbox, registry, owner: delivery.worker.owner, onQueued: kick });
  const retention = createRetention({ ...io, ...config.retention, store });
  const parts = { store, renderer, notifier, netbox, watchdog, digests, catchUps, retention, webhooksInFlight, ...delivery, ...shared };
  // Annotated: RelayParts is derived from what this function returns, which must not wait on the app's type.
  const app: Express = createRelayApp(config, io, parts);
  let stopping: Promise<void> | undefined;
  return {
    ...parts,
    app,
    /** Releases what a previous process left in flight and starts the worker and the timers. */
    start: (): Promise<void> => startRelay(parts, io),
    /**
     * Stops the worker at once (waiting for sends in flight up to the bound), then closes the mail transport, NetBox and,
     * once `requestsDone` (the HTTP server's close), the store; once.
     */
    stop: (requestsDone: Promise<void> = Promise.resolve()): Promise<void> => (stopping ??= stopRelay(parts, config, io, requestsDone)),
  };
}

/** One watchdog for the sources that expect reports (EXPECT_REPORT_EVERY, `expect_report_every`); undefined when none does. */
function createSourceWatchdogs(config: Config, io: RelayIo, deps: { store: Store; onQueued: () => void }): Watchdog | undefined {
  const sources = config.sources
    .filter((source) => source.expectEveryMs !== undefined)
    .map((source) => ({
      expectEveryMs: source.expectEveryMs!,
      source: source.name === DEFAULT_SOURCE_NAME ? undefined : source.name,
      catchUp: planCatchUp(source).on,
    }));
  return sources.length ? createWatchdog({ ...io, store: deps.store, onQueued: deps.onQueued, sources }) : undefined;
}

async function startRelay(parts: RelayParts, io: RelayIo): Promise<void> {
  const { store } = parts;
  try {
    const migration = await store.migrate();
    // One line: the names of what was applied are for `migrate`, not for every first start.
    const applied = migration.applied.length;
    if (applied > 0)
      io.logger.info({ version: migration.version, applied }, `store schema migrated to version ${migration.version} (${applied} applied)`);
    // Only a single-owner store (SQLite) releases every lease; replicas wait for a dead one's leases to expire.
    if (store.singleOwner) {
      const released = await store.releaseLeases(io.clock.now());
      if (released > 0) io.logger.warn({ released }, 'resuming deliveries that were being sent when the relay last stopped');
    }
  } catch (error) {
    // Storage unusable now: start anyway (503 until it is back); the leases left behind expire and are sent then.
    if (!(error instanceof StorageUnavailableError)) throw error;
    io.logger.error({ code: error.code, err: error.message }, 'the outbox is not usable at start; answering 503 until it is');
  }
  for (const part of [parts.worker, parts.retention, parts.transportHealth, parts.watchdog, parts.digests, parts.catchUps]) part?.start();
}

async function stopRelay(parts: RelayParts, config: Config, io: RelayIo, requestsDone: Promise<void>): Promise<void> {
  const { worker } = parts;
  for (const part of [parts.retention, parts.transportHealth, parts.watchdog, parts.digests]) part?.stop();
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
  // A webhook still being answered stores its delivery before the store closes.
  await requestsDone;
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

/** The HTTP side: webhook, admin API, dashboard, health and metrics (createApp never listens). */
function createRelayApp(config: Config, io: RelayIo, parts: RelayParts): Express {
  const { logger } = io;
  const { store, metrics, watchdog } = parts;
  registerWaiverGauge(metrics.registry, { countActive: () => parts.waivers.countActive(), logger });
  // What the admin API and the dashboard share, one count of wrong admin tokens per address among it.
  const shared = { ...io, ...parts, throttle: createAuthThrottle() };
  return createApp({
    ...shared,
    config,
    onQueued: () => {
      parts.worker.kick();
      // A report that ends a silence is announced at once, not at the next check.
      if (watchdog) void watchdog.evaluate().catch((error: unknown) => logger.error({ err: error }, 'watchdog: evaluation failed'));
    },
    onWebhookOutcome: (outcome) => {
      metrics.recordWebhook(outcome);
      io.onWebhookOutcome?.(outcome);
    },
    readiness: () => checkReadiness({ ...parts, clock: io.clock }),
    dashboard: createDashboardRouter({
      ...shared,
      adminToken: config.admin.token,
      timezone: config.mail.timezone,
      routeNames: config.routing.routes.map((r) => r.name),
      sources: config.sources,
      digests: { schedules: () => parts.digests.schedules(), periods: (options) => store.listDigestPeriods(options) },
      notices: config.webhook.unsignedFromNetwork ? [describeUnsignedWebhook(config)!] : [],
    }),
  });
}

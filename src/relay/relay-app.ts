import type { Express } from 'express';
import { describeUnsignedWebhook, type Config } from '../config';
import { createApp } from '../http';
import { checkReadiness } from '../health';
import { createDashboardRouter } from '../dashboard';
import { registerWaiverGauge } from '../metrics';
import { createAuthThrottle } from '../shared';
import type { RelayIo, RelayParts, SharedParts } from './types';

/** The HTTP side: webhook, admin API, dashboard, health and metrics (createApp never listens). */
export function createRelayApp(
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
    dashboard: createDashboardRouter({
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
      mailStatus: () => parts.transportHealth.status(),
      digests: { schedules: () => parts.digests.schedules(), periods: (options) => store.listDigestPeriods(options) },
      notices: config.webhook.unsignedFromNetwork ? [describeUnsignedWebhook(config)!] : [],
      throttle: authThrottle,
      sleep: io.sleep,
      waivers,
    }),
    observe: {
      readiness: () =>
        checkReadiness({
          store,
          renderer: parts.renderer,
          transport: parts.transportHealth,
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

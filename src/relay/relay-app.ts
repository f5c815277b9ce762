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
  // What the admin API and the dashboard share, one count of wrong admin tokens per address among it.
  const shared = {
    store,
    clock,
    logger,
    waivers,
    sleep: io.sleep,
    throttle: createAuthThrottle(),
    onRequeued: () => worker.kick(),
    tryNow: () => worker.tryNow(),
  };
  return createApp({
    ...shared,
    config,
    onQueued: () => {
      worker.kick();
      // A report that ends a silence is announced at once, not at the next check.
      if (watchdog) void watchdog.evaluate().catch((error: unknown) => logger.error({ err: error }, 'watchdog: evaluation failed'));
    },
    webhooksInFlight: parts.webhooksInFlight,
    onWebhookOutcome: (outcome) => {
      metrics.recordWebhook(outcome);
      io.onWebhookOutcome?.(outcome);
    },
    dashboard: createDashboardRouter({
      ...shared,
      adminToken: config.admin.token,
      timezone: config.mail.timezone,
      failures: parts.failures,
      netboxUrl: config.sources[0].netbox.url,
      routeNames: config.routing.routes.map((r) => r.name),
      sources: config.sources,
      unrecordedOutcomes: () => worker.unrecorded.count,
      smtpPause: () => worker.breaker,
      mailStatus: () => parts.transportHealth.status(),
      digests: { schedules: () => parts.digests.schedules(), periods: (options) => store.listDigestPeriods(options) },
      notices: config.webhook.unsignedFromNetwork ? [describeUnsignedWebhook(config)!] : [],
    }),
    observe: {
      readiness: () => checkReadiness({ ...parts, clock }),
      metrics,
      metricsToken: config.observe.metricsToken,
      adminToken: config.admin.token,
    },
  });
}

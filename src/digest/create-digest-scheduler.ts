import { parseDigestSchedule, type DigestSchedule, type Route } from '../routing';
import { coalesceRuns, createRepeatingTask, type Clock, type Logger } from '../shared';
import { buildJobDelivery, type DigestPeriod, type Store } from '../store';

/** A digest queued this long after its tick says it is late (the relay was not running at the tick). */
const DIGEST_LATE_AFTER_MS = 10 * 60_000;

/** How often the schedules are looked at (a digest goes out at most this long after its tick). */
const DIGEST_CHECK_EVERY_MS = 30_000;

export interface DigestSchedulerOptions {
  store: Pick<Store, 'listDigestPeriods' | 'queueDigest'>;
  clock: Clock;
  logger: Logger;
  /** Those with `digest` are scheduled. */
  routes: readonly Route[];
  /** MAIL_TIMEZONE: the zone of a schedule without its own. */
  defaultTimezone: string;
  onQueued?: (deliveryId: number) => void;
}

export type DigestScheduler = ReturnType<typeof createDigestScheduler>;

/**
 * Queues each digest route's digest once per period, from its last recorded period's end to the latest tick (missed
 * ticks: one late digest). Recorded with its mail under a unique key, so replicas and restarts queue it once. A new
 * route records the tick just past without a mail.
 */
export function createDigestScheduler(options: DigestSchedulerOptions) {
  const { store, clock, logger } = options;
  const routes = options.routes
    .filter((r) => r.digest)
    .map((route) => {
      const timezone = route.digest!.timezone ?? options.defaultTimezone;
      return { route, timezone, schedule: parseDigestSchedule(route.digest!.schedule, timezone) };
    });

  async function evaluateRoute(route: Route, schedule: DigestSchedule, now: number): Promise<DigestPeriod | undefined> {
    const tick = schedule.tickAtOrBefore(now);
    if (tick === null) return undefined;
    const [last] = await store.listDigestPeriods({ route: route.name, limit: 1 });
    if (!last) {
      // The period that ended at `tick` was before this route existed: recorded, not mailed.
      const start = schedule.tickAtOrBefore(tick - 1) ?? tick - 1;
      await store.queueDigest({ route: route.name, periodStart: start, periodEnd: tick, late: false, now, job: null });
      return undefined;
    }
    if (last.periodEnd >= tick) return undefined;
    const period = { route: route.name, periodStart: last.periodEnd, periodEnd: tick, late: now - tick > DIGEST_LATE_AFTER_MS };
    const job = buildJobDelivery({ kind: 'digest', job: { ...period, queuedAt: now } });
    const result = await store.queueDigest({ ...period, now, job });
    if (!result.queued) return undefined;
    const fields = {
      route: route.name,
      periodStart: new Date(period.periodStart).toISOString(),
      periodEnd: new Date(tick).toISOString(),
      deliveryId: result.deliveryId,
    };
    if (period.late) logger.warn(fields, `digest ${route.name}: queued late (the relay was not running at its tick)`);
    else logger.info(fields, `digest ${route.name}: queued`);
    options.onQueued?.(result.deliveryId!);
    return { ...period, deliveryId: result.deliveryId, queuedAt: now };
  }

  // One evaluation at a time in this process; the unique key settles races between processes.
  const evaluate = coalesceRuns(async (): Promise<DigestPeriod[]> => {
    const now = clock.now();
    const queued: DigestPeriod[] = [];
    for (const { route, schedule } of routes) {
      const period = await evaluateRoute(route, schedule, now);
      if (period) queued.push(period);
    }
    return queued;
  });
  const task = createRepeatingTask(
    () => void evaluate().catch((error: unknown) => logger.error({ err: error }, 'digests: cannot read or queue a digest; will try again')),
    DIGEST_CHECK_EVERY_MS,
  );

  return {
    /** Queues every digest that is due now; resolves with the periods this call queued. */
    evaluate,
    /** Each digest route with its next run (null: none) and how long the period after it is (null: no such pair). */
    schedules: () =>
      routes.map(({ route, timezone, schedule }) => {
        const nextRunAt = schedule.tickAfter(clock.now());
        const following = nextRunAt === null ? null : schedule.tickAfter(nextRunAt);
        return {
          route: route.name,
          schedule: route.digest!.schedule,
          timezone,
          nextRunAt,
          nextPeriodMs: nextRunAt === null || following === null ? null : following - nextRunAt,
        };
      }),
    start() {
      if (routes.length > 0) task.start();
    },
    stop: task.stop,
  };
}

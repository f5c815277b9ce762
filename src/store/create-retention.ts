import { createRepeatingTask, type Clock, type Logger } from '../shared';
import { DAY_MS } from '../waivers';
import type { Store } from './sql-store';

export interface Retention {
  /** Prunes once now; resolves with how many sent deliveries were deleted. */
  pruneNow(): Promise<number>;
  start(): void;
  stop(): void;
}

/**
 * Deletes sent deliveries (and their stored bodies) older than `days`, every `intervalMs`.
 * Dead deliveries are never pruned here: they wait for an operator (`retry`, or `prune --dead`).
 * `days` = 0 keeps everything.
 */
export function createRetention(options: { store: Store; clock: Clock; logger: Logger; days: number; intervalMs: number }): Retention {
  const pruneNow = async (): Promise<number> => {
    if (options.days <= 0) return 0;
    const before = options.clock.now() - options.days * DAY_MS;
    const pruned = await options.store.pruneDeliveries({ state: 'sent', before });
    if (pruned > 0)
      options.logger.info(
        { pruned, before: new Date(before).toISOString() },
        `pruned ${pruned} sent deliveries older than ${options.days} days`,
      );
    return pruned;
  };
  const task = createRepeatingTask(
    () => void pruneNow().catch((error: unknown) => options.logger.warn({ err: error }, 'cannot prune old deliveries now; will try again')),
    options.intervalMs,
  );
  return {
    pruneNow,
    start() {
      if (options.days > 0) task.start();
    },
    stop: task.stop,
  };
}

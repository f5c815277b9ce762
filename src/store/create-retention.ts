import { createRepeatingTask, type Clock, type Logger } from '../shared';
import { DAY_MS } from '../waivers';
import type { Store } from './sql-store';

/** Deletes sent deliveries older than `days` (0: keep all) every `intervalMs`; dead ones wait for an operator. */
export function createRetention(options: { store: Store; clock: Clock; logger: Logger; days: number; intervalMs: number }) {
  const pruneOld = async (): Promise<void> => {
    const before = options.clock.now() - options.days * DAY_MS;
    const pruned = await options.store.pruneDeliveries({ state: 'sent', before });
    if (pruned > 0)
      options.logger.info(
        { pruned, before: new Date(before).toISOString() },
        `pruned ${pruned} sent deliveries older than ${options.days} days`,
      );
  };
  const task = createRepeatingTask(
    () => void pruneOld().catch((error: unknown) => options.logger.warn({ err: error }, 'cannot prune old deliveries now; will try again')),
    options.intervalMs,
  );
  return {
    start() {
      if (options.days > 0) task.start();
    },
    stop: task.stop,
  };
}

import type { Clock, Logger } from '../shared';
import type { Store } from '../store';

/** Extends the leases of the deliveries this worker has in flight, so none expires while it waits its turn. */
export interface LeaseKeeper {
  start(): void;
  stop(): void;
}

/**
 * A delivery prepared ahead waits for a send slot (send-gate.ts), and under load, or behind slow SMTP
 * sends, that wait can outlast LEASE_MS. Its claim must not expire meanwhile, or it would be claimed
 * again (by this worker or another replica) and mailed twice. Every third of a lease, the leases of
 * everything in flight are extended in one statement; a failed extension is logged and tried again at
 * the next beat (the outcome ledger keeps its own held claims alive the same way).
 */
export function createLeaseKeeper(options: {
  store: Pick<Store, 'extendLeases'>;
  owner: string;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** The ids of the deliveries in flight now. */
  inFlight: () => number[];
}): LeaseKeeper {
  let timer: NodeJS.Timeout | undefined;
  const beat = async (): Promise<void> => {
    const ids = options.inFlight();
    if (ids.length === 0) return;
    try {
      await options.store.extendLeases({ ids, owner: options.owner, now: options.clock.now(), leaseMs: options.leaseMs });
    } catch (error) {
      options.logger.warn({ err: error, deliveryIds: ids }, 'cannot extend the leases of deliveries in flight; trying again shortly');
    }
  };
  return {
    start() {
      if (timer) return;
      timer = setInterval(() => void beat(), Math.max(1, Math.floor(options.leaseMs / 3)));
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

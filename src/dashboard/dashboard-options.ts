import type { Worker } from '../delivery';
import type { TransportHealth } from '../health';
import type { AuthThrottle, Clock, FailureCatalogue, Logger } from '../shared';
import type { DeliveryState, DigestPeriod, Store } from '../store';
import type { WaiverBook } from '../waivers';

export interface DashboardOptions {
  /** ADMIN_TOKEN; without it the dashboard answers 404 and says how to turn it on. */
  adminToken?: string;
  store: Pick<
    Store,
    | 'listDeliveries'
    | 'readQueue'
    | 'getDelivery'
    | 'getDeliveryBody'
    | 'getSentMessage'
    | 'listSentMessages'
    | 'requeue'
    | 'retryNow'
    | 'listRouteMails'
  >;
  clock: Clock;
  logger: Logger;
  timezone: string;
  /** The relay's failure catalogue (its transports' codes and its own). */
  failures: FailureCatalogue;
  /** The NetBox sources: with more than one, the list names and filters by source; reports link into their own NetBox. */
  sources?: readonly { name: string; netbox: { url?: string } }[];
  /**
   * Banners on every page while its pause holds the queue (with "try now") or outcomes the store refused wait in
   * memory; kicked after a requeue.
   */
  worker?: Pick<Worker, 'breaker' | 'unrecorded' | 'kick' | 'tryNow'>;
  /** ROUTES_FILE's route names, suggested in the list's route filter. */
  routeNames?: readonly string[];
  /** Slows down failed logins per address; shared with the admin API, which takes the same token. */
  throttle?: AuthThrottle;
  sleep?: (ms: number) => Promise<void>;
  /** Warnings about the relay's own configuration (an unsigned webhook open to the network). */
  notices?: string[];
  /** The mail server's state as /readyz's smtp check reports it: a banner while it fails. */
  transportHealth?: Pick<TransportHealth, 'status'>;
  /** Accepted exceptions: the waivers pages under /ui/waivers. */
  waivers?: WaiverBook;
  /** The digest routes' schedules with next runs, and the latest periods. */
  digests?: {
    schedules: () => DigestsInput['schedules'];
    periods: (options: { limit: number }) => Promise<DigestPeriod[]>;
  };
}

/** The digest routes beside the deliveries list. */
export interface DigestsInput {
  schedules: readonly { route: string; schedule: string; timezone: string; nextRunAt: number | null }[];
  /** The latest digests, newest first, each with its delivery's state. */
  periods: readonly (DigestPeriod & { state?: DeliveryState })[];
}

import { type NetboxClient } from '../netbox';
import { type BatchItem, type Worker } from '../delivery';
import { type Renderer } from '../mail';
import { type Notifier, type TransportDescriptor } from '../notify';
import { type TransportHealth } from '../health';
import { type RelayMetrics } from '../metrics';
import { type WaiverBook } from '../waivers';
import { type Watchdog } from '../watchdog';
import { type DigestScheduler } from '../digest';
import { type SourceCatchUps } from '../catch-up';
import type { WebhookOutcome } from '../webhook';
import { type ActivityCounter, type Clock, type FailureCatalogue, type Logger } from '../shared';
import { type Retention, type Store } from '../store';

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

/** What createRelay builds before the app, and what start and stop act on. */
export interface RelayParts {
  store: Store;
  renderer: Renderer;
  notifier: Notifier;
  netbox: Map<string, NetboxClient>;
  worker: Worker;
  metrics: RelayMetrics;
  transportHealth: TransportHealth;
  watchdog?: Watchdog;
  digests: DigestScheduler;
  catchUps: SourceCatchUps;
  retention: Retention;
  webhooksInFlight: ActivityCounter;
  /** Built once at start for the mails, the metrics and the dashboard alike. */
  failures: FailureCatalogue;
  waivers: WaiverBook;
}

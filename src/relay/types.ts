import { type BatchItem } from '../delivery';
import { type TransportDescriptor } from '../notify';
import type { WebhookOutcome } from '../webhook';
import { type Clock, type Logger } from '../shared';

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

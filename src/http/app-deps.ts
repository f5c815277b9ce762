import type { RequestHandler } from 'express';
import type { Config } from '../config';
import type { Worker } from '../delivery';
import type { Readiness } from '../health';
import type { RelayMetrics } from '../metrics';
import type { ActivityCounter, AuthThrottle, Clock, Logger } from '../shared';
import type { Store } from '../store';
import type { WaiverBook } from '../waivers';
import type { WebhookOutcome } from '../webhook';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webhook' | 'sources' | 'admin' | 'observe' | 'secretValues'>;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Called once a webhook's delivery is durably stored (wakes the worker). */
  onQueued: (id: number) => void;
  /** Kicked when an operator requeues deliveries through the admin API; its try-now is an operator's resume (a paused or held queue probes now). */
  worker: Pick<Worker, 'kick' | 'tryNow'>;
  onWebhookOutcome: (outcome: WebhookOutcome) => void;
  /** Counts the webhooks from their arrival at a webhook path until their answer is sent: the `compliance_relay_webhooks_in_flight` gauge. */
  webhooksInFlight: ActivityCounter;
  dashboard: RequestHandler;
  readiness: () => Promise<Readiness>;
  metrics: Pick<RelayMetrics, 'render' | 'contentType'>;
  waivers: WaiverBook;
  /** Shared with the dashboard's login: wrong admin tokens from one address are slowed down wherever they are tried. */
  throttle: AuthThrottle;
  /** Waits before a wrong token is answered; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
}

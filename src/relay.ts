import path from 'node:path';
import type { Express } from 'express';
import type { Config } from './config';
import { createMailComposer, createRetention, createWorker, type Retention, type Worker, type WorkerOutcome } from './delivery';
import { createApp, type WebhookOutcome } from './http';
import { createFileTransport, createSmtpTransport, loadRenderer, type MailTransport, type Renderer } from './mail';
import { findPackageRoot, type Clock, type Logger } from './shared';
import { SqliteStore, StorageUnavailableError, type Store } from './store';
import { sampleDeliveryView } from './sample';

/** The world as the relay sees it: injected so that tests run the real thing in-process. */
export interface RelayIo {
  clock: Clock;
  logger: Logger;
  readFile: (file: string) => Buffer;
  random?: () => number;
  onWorkerOutcome?: (event: WorkerOutcome) => void;
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
}

export interface Relay {
  app: Express;
  store: Store;
  worker: Worker;
  retention: Retention;
  transport: MailTransport;
  renderer: Renderer;
  /** Releases what a previous process left in flight and starts the worker. */
  start(): Promise<void>;
  /** Stops the worker (waiting for sends in flight up to the bound), closes SMTP and the store. */
  stop(): Promise<void>;
}

/** The templates shipped with the package. */
export function defaultTemplatesDir(): string {
  return path.join(findPackageRoot(), 'templates');
}

/**
 * Builds the whole relay from a validated config: store, renderer (templates compiled and checked
 * against a sample report now, so a broken template stops the start), transport, worker and app.
 * Nothing listens and no timer runs until `start()` and the caller's `listen`.
 */
export function createRelay(config: Config, io: RelayIo): Relay {
  const { logger, clock } = io;
  const renderer = loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir());
  renderer.render(sampleDeliveryView(config));

  const store = SqliteStore.open({ dataDir: config.store.dataDir, synchronous: config.store.sqliteSynchronous });
  const transport = config.smtp ? createSmtpTransport(config.smtp, { readFile: io.readFile }) : createFileTransport(config.mail.outboxDir);
  const compose = createMailComposer({
    renderer,
    clock,
    from: config.mail.from,
    recipients: { to: config.mail.to, cc: config.mail.cc, bcc: config.mail.bcc, replyTo: config.mail.replyTo },
    timezone: config.mail.timezone,
    netboxUrl: config.netbox.url,
  });
  const worker = createWorker({
    store,
    transport,
    compose,
    clock,
    logger,
    retry: config.retry,
    concurrency: config.worker.concurrency,
    pollMs: config.worker.pollMs,
    leaseMs: config.worker.leaseMs,
    random: io.random,
    onOutcome: io.onWorkerOutcome,
  });
  const app = createApp({
    config,
    store,
    clock,
    logger,
    onQueued: () => worker.kick(),
    onRequeued: () => worker.kick(),
    onWebhookOutcome: io.onWebhookOutcome,
  });

  const retention = createRetention({ store, clock, logger, days: config.retention.days, intervalMs: config.retention.intervalMs });

  let stopped = false;
  return {
    app,
    store,
    worker,
    retention,
    transport,
    renderer,
    async start() {
      // One relay process owns a SQLite data dir: whatever was "sending" when it last stopped was interrupted.
      try {
        const released = await store.releaseLeases(clock.now());
        if (released > 0) logger.warn({ released }, 'resuming deliveries that were being sent when the relay last stopped');
      } catch (error) {
        // Storage is unusable right now: start anyway (the webhook answers 503 until it is back); the
        // leases left behind expire after LEASE_MS and those deliveries are sent then.
        if (!(error instanceof StorageUnavailableError)) throw error;
        logger.error({ code: error.code, err: error.message }, 'the outbox is not usable at start; answering 503 until it is');
      }
      worker.start();
      retention.start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      retention.stop();
      const drained = await worker.stop(config.http.shutdownTimeoutMs);
      if (!drained) logger.warn({ inFlight: worker.inFlight }, 'shutdown bound reached with sends in flight: they will be sent again at the next start');
      await transport.close();
      await store.close();
    },
  };
}

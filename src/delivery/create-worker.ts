import { randomUUID } from 'node:crypto';
import type { DeliveryRecord } from '../store';
import { buildNextSlice, composeBatch, type BatchItem, type Stage, type WorkerOptions } from './compose-batch';
import { createRetryDecider, type QueuePauseStatus } from './retry-policy';
import { sendBatch } from './send-batch';
import { recordSlices, settleBatch, type SettleState, type UnrecordedStatus } from './settle-batch';

/** What {@link Worker.tryNow} did: a paused queue probes now; a probe in flight decides; or nothing was paused. */
export type TryNowResult = 'probing-now' | 'probe-in-flight' | 'not-paused';

export type Worker = ReturnType<typeof createWorker>;

interface Loop {
  readonly options: Stage;
  readonly owner: string;
  readonly settle: SettleState;
  running: boolean;
  stopping: boolean;
  /** The ids claimed and not yet settled; their leases are kept. */
  claimed: Set<number>;
  /** The batch in flight of each source: no other delivery of that source is claimed meanwhile, so each source's mails keep their order. */
  sources: Map<string, Promise<void>>;
  wake?: () => void;
  done?: Promise<void>;
  leaseTimer?: NodeJS.Timeout;
}

/**
 * The delivery loop: claim due deliveries (durably, leased) → compose → send → settle in one write. One batch per
 * NetBox source at a time, side by side, at most `concurrency` deliveries: a slow source holds only its own mails,
 * in order, and never every slot. A crash between claim and settle sends again: at least once, duplicates bounded
 * by those in flight.
 */
export function createWorker(options: WorkerOptions) {
  const policy = createRetryDecider(options.retry, options.random);
  const loop: Loop = {
    options: { ...options, policy, random: options.random ?? Math.random },
    owner: `relay-${process.pid}-${randomUUID().slice(0, 8)}`,
    settle: { unrecorded: { count: 0 } },
    running: false,
    stopping: false,
    claimed: new Set(),
    sources: new Map(),
  };
  return {
    /** This process's name on the leases it takes (the catch-up's leases carry the same). */
    owner: loop.owner,
    get inFlight() {
      return loop.claimed.size;
    },
    /** The queue's pause (retry-policy.ts): `open` while the server is down and the queue is paused. */
    get breaker(): QueuePauseStatus {
      const { state, openUntil, failures, pausedSince, lastError, held } = policy;
      return { state, openUntil, failures, pausedSince, lastError, held };
    },
    /** The batch the store refuses to record, if any (/readyz, the gauge, the dashboard's banner). */
    get unrecorded(): UnrecordedStatus {
      return loop.settle.unrecorded;
    },
    /** An operator's "try now" (the dashboard's button): a paused queue probes at once, the deliveries waiting for it made due now. */
    tryNow: (): Promise<TryNowResult> => tryNow(loop),
    start(): void {
      if (loop.running) return;
      loop.running = true;
      loop.stopping = false;
      loop.settle.deadline = undefined;
      loop.leaseTimer = setInterval(() => void keepLeases(loop), Math.max(1, Math.floor(options.leaseMs / 3)));
      loop.leaseTimer.unref?.();
      loop.done = runLoop(loop);
    },
    /** Looks at the queue now (after an ingest); with a batch in flight, the new work is claimed when a batch ends, or at the next poll. */
    kick: (): void => (loop.sources.size === 0 ? loop.wake?.() : undefined),
    /** Stops claiming; waits up to `timeoutMs` for the batch in flight to be sent and recorded. Resolves true when none is left. */
    stop: (timeoutMs: number): Promise<boolean> => stopLoop(loop, timeoutMs),
  };
}

async function runLoop(loop: Loop): Promise<void> {
  const { store, clock, logger, concurrency, leaseMs, pollMs, policy, sourceCount = 1 } = loop.options;
  // With several sources, one claim never takes every send slot, so a slow NetBox's batch cannot hold them all.
  const perClaim = sourceCount > 1 && concurrency > 1 ? concurrency - 1 : concurrency;
  await releaseOwnHolds(loop);
  while (!loop.stopping) {
    const now = clock.now();
    const free = Math.max(1, concurrency) - loop.claimed.size;
    // While the store refuses a settle, nothing new is claimed (see settleBatch).
    const limit = free > 0 && loop.settle.unrecorded.count === 0 ? policy.capacity(now, Math.min(free, perClaim)) : 0;
    if (limit > 0) {
      // Whether this claim is the probe of a paused queue is decided before the await.
      const asProbe = policy.state === 'open';
      let claimed: DeliveryRecord[] | undefined;
      try {
        claimed = await store.claimDue({ now, limit, owner: loop.owner, leaseMs, skipSources: [...loop.sources.keys()] });
      } catch (error) {
        logger.error({ err: error }, 'cannot claim deliveries from the outbox; will try again');
      }
      if (asProbe) policy.claimed(claimed?.length ?? 0);
      if (claimed && claimed.length > 0) startBatches(loop, claimed, asProbe);
      else if (!claimed) {
        await waitForWork(loop, pollMs);
        continue;
      }
    }
    // With a batch in flight, the loop waits for one to end (or polls for the other sources' work).
    await waitForWork(loop, loop.sources.size > 0 ? pollMs : await computeIdleDelay(loop));
  }
  await Promise.all(loop.sources.values());
}

/** Deliveries held by their own operator-fixable failure (a template) are due now: a start loaded the templates again. */
async function releaseOwnHolds(loop: Loop): Promise<void> {
  const { store, clock, logger, failures } = loop.options;
  const codes = Object.keys(failures).filter((code) => failures[code].configProblem && failures[code].scope === 'message');
  try {
    const released = await store.expediteFailedWith({ now: clock.now(), codes });
    if (released > 0) logger.info({ released, codes }, 'deliveries held by a failure an operator fixes are due now');
  } catch (error) {
    // They stay on their backoff; the claim reports the store's trouble too.
    logger.warn({ err: error }, 'cannot make the deliveries held for an operator due now');
  }
}

function startBatches(loop: Loop, deliveries: DeliveryRecord[], asProbe: boolean): void {
  const bySource = new Map<string, DeliveryRecord[]>();
  for (const d of deliveries) bySource.set(d.source, [...(bySource.get(d.source) ?? []), d]);
  for (const [source, batch] of bySource) {
    for (const d of batch) loop.claimed.add(d.id);
    loop.sources.set(
      source,
      runBatch(loop, batch, asProbe).finally(() => {
        for (const d of batch) loop.claimed.delete(d.id);
        loop.sources.delete(source);
        loop.wake?.();
      }),
    );
  }
}

/** One batch through the stages. Never rejects: a delivery whose run broke is left to its lease. */
async function runBatch(loop: Loop, deliveries: DeliveryRecord[], asProbe: boolean): Promise<void> {
  const { options } = loop;
  const { policy } = options;
  const started = options.clock.now();
  try {
    const items = await composeBatch(options, deliveries);
    await shareComposedReports(options, deliveries);
    // A probe is claimed alone: the oldest due delivery.
    if (asProbe && items.length > 0) items[0].isProbe = true;
    await sendBatch(options, items);
    // Many route mails: each slice is recorded before the next is built, so a crash repeats one slice at most.
    for (let more = items.filter(hasUnbuiltMails); more.length > 0; more = more.filter(hasUnbuiltMails)) {
      // A stop's deadline came first (logged): the deliveries come back when their leases end.
      if (!(await recordSlices(options, loop.settle, more))) return;
      for (const item of more) await buildNextSlice(options, item);
      await sendBatch(options, more);
    }
    await settleBatch(options, loop.settle, items, started);
  } catch (error) {
    options.logger.error(
      { err: error, deliveryIds: deliveries.map((d) => d.id) },
      'cannot prepare the batch (nothing was sent); its deliveries will be tried again when their lease expires',
    );
    // What it composed is composed again then.
    options.history.take(deliveries.map((d) => d.dedupKey));
  } finally {
    // Still probing here: the probe never reached the server (it could not be composed); the next claim probes again.
    if (asProbe && policy.state === 'probing') policy.probeEnded(options.clock.now());
  }
}

/** Due route mails not built yet, and nothing stopped the delivery's sends (a paused queue, a store away). */
function hasUnbuiltMails(item: BatchItem): boolean {
  return item.mails.length < item.due.length && item.deferredUntil === undefined && !item.abandoned;
}

/** Shared store: composed reports are written before sending, so another replica's successor compares with their failing sets. */
async function shareComposedReports(options: Stage, deliveries: DeliveryRecord[]): Promise<void> {
  const { store, history, clock, logger } = options;
  if (store.singleOwner) return;
  const reports = history.take(deliveries.map((d) => d.dedupKey));
  if (reports.length === 0) return;
  try {
    await store.settleBatch({ now: clock.now(), deliveries: [], reports });
  } catch (error) {
    logger.warn({ err: error }, 'cannot record the composed reports before sending; the settle records them');
    for (const report of reports) await history.saveReport(report);
  }
}

/** How long to wait when nothing is due: until the pause ends, the next delivery is due, or the poll interval. */
async function computeIdleDelay(loop: Loop): Promise<number> {
  const { store, clock, pollMs, policy } = loop.options;
  const now = clock.now();
  if (policy.state === 'open' && policy.openUntil > now) return policy.openUntil - now;
  try {
    const due = (await store.readQueueTimes()).nextDueAt;
    if (due !== null) return Math.min(pollMs, Math.max(0, due - clock.now()));
  } catch {
    // The poll interval still applies; the claim will report the storage problem.
  }
  return pollMs;
}

/** Resolves after `delayMs`, or at once when kicked (a webhook queued work) or stopped. */
function waitForWork(loop: Loop, delayMs: number): Promise<void> {
  if (loop.stopping) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => loop.wake?.(), Math.max(0, delayMs));
    loop.wake = () => {
      clearTimeout(timer);
      loop.wake = undefined;
      resolve();
    };
  });
}

/** Extends the leases of the batch in flight, so none expires while it is sent or while its settle waits for the store. */
async function keepLeases(loop: Loop): Promise<void> {
  const ids = [...loop.claimed];
  if (ids.length === 0) return;
  const { store, clock, leaseMs, logger } = loop.options;
  try {
    await store.extendLeases({ ids, owner: loop.owner, now: clock.now(), leaseMs });
  } catch (error) {
    logger.debug({ err: error, deliveryIds: ids }, 'cannot extend the leases of the batch in flight yet; trying again shortly');
  }
}

async function tryNow(loop: Loop): Promise<TryNowResult> {
  const { clock, logger, store, policy } = loop.options;
  if (policy.state === 'probing') return 'probe-in-flight';
  if (policy.state === 'closed') {
    loop.wake?.();
    return 'not-paused';
  }
  const now = clock.now();
  const until = policy.openUntil;
  policy.tryNow(now);
  try {
    const expedited = await store.expediteRetries({ now, until });
    logger.info({ expedited }, 'an operator asked to try the mail server now: probing with the oldest due delivery');
  } catch (error) {
    // The probe still goes, with whatever is due; the store's trouble is reported by the claim too.
    logger.warn({ err: error }, 'try now: cannot make the waiting deliveries due now');
  }
  loop.wake?.();
  return 'probing-now';
}

async function stopLoop(loop: Loop, timeoutMs: number): Promise<boolean> {
  if (!loop.running) return true;
  loop.stopping = true;
  loop.settle.deadline = loop.options.clock.now() + timeoutMs;
  loop.wake?.();
  // The leases are kept until the batch in flight is settled or given up.
  void loop.done!.finally(() => clearInterval(loop.leaseTimer));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs + 100)));
  const drained = await Promise.race([loop.done!.then(() => true as const), timeout]);
  clearTimeout(timer);
  loop.running = false;
  return drained;
}

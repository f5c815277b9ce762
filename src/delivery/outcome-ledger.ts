import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import type { ReportSnapshot } from '../trend';
import { computeBackoffMs, type RetryPolicy } from './backoff';

/**
 * Outcomes held in memory at most (deliveries and report snapshots): past it the worker claims no
 * new work rather than send mail it could not record (issue 21).
 */
export const MAX_UNRECORDED_OUTCOMES = 10_000;

/** How often, at most, the "outcomes cannot be recorded" warning is logged while some are waiting. */
export const UNRECORDED_WARNING_EVERY_MS = 60_000;

/** First and longest pause between two attempts to record what is waiting (the longest also bounded by the lease). */
const RETRY_BASE_MS = 200;
const RETRY_MAX_DELAY_MS = 10_000;

/** Entries written at once in one retry round: a full queue drains in a few group commits, not thousands. */
const ROUND_CONCURRENCY = 64;

/** One write that records what happened to a delivery's send, in the order the worker asked for them. */
export type OutcomeWrite =
  | { kind: 'route-sent'; route: string; now: number; messageId: string; response: string }
  | { kind: 'route-failed'; route: string; now: number; error: string; code: string; permanent: boolean }
  | { kind: 'sent'; now: number; messageId: string }
  | { kind: 'retry'; now: number; nextAttemptAt: number; error: string; code: string }
  | { kind: 'dead'; now: number; error: string; code: string };

/** The claim an outcome belongs to: whose lease to keep alive while it waits. */
export interface OutcomeOwner {
  deliveryId: number;
  reportId: number;
  /** The lease owner the worker claimed it as. */
  owner: string;
}

export type LedgerStore = Pick<Store, 'markRouteMailSent' | 'markRouteMailFailed' | 'markSent' | 'markRetry' | 'markDead' | 'saveReport' | 'extendLeases'>;

/** Timers, injected so that tests drive the retries. */
export interface LedgerTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface OutcomeLedgerOptions {
  store: LedgerStore;
  clock: Clock;
  logger: Logger;
  /** The worker's LEASE_MS: held claims are extended by this, well before it runs out. */
  leaseMs: number;
  maxUnrecorded?: number;
  random?: () => number;
  timers?: LedgerTimers;
  /** After every change of the number waiting (the worker resumes claiming below the cap). */
  onChange?: (unrecorded: number) => void;
}

/** Why the last write failed, for /readyz and the banner. */
export interface LedgerError {
  code: string;
  message: string;
}

export interface OutcomeLedger {
  /**
   * Records `write` now, or — when the store refuses it, or an earlier write of the same delivery is
   * still waiting — keeps it (in order) and retries with backoff until it lands, keeping the
   * delivery's lease alive meanwhile. Never rejects: an outcome the relay knows is not forgotten.
   */
  record(claim: OutcomeOwner, write: OutcomeWrite): Promise<'recorded' | 'held'>;
  /** The trend's report snapshot, kept and retried the same way (it never fails the mail). */
  saveReport(snapshot: ReportSnapshot): Promise<void>;
  /** True while an outcome of this delivery waits: it must not be claimed and sent again. */
  holds(deliveryId: number): boolean;
  /** Outcomes waiting to be recorded (deliveries and report snapshots). */
  readonly unrecorded: number;
  /** At the cap: claim nothing new. */
  readonly full: boolean;
  /** The store's answer to the last failed write while any is waiting. */
  readonly lastError: LedgerError | undefined;
  /**
   * For shutdown: retries until `deadline` (epoch ms), then logs one line per delivery still
   * unrecorded with its Message-IDs (those mails may be sent again at the next start). Resolves
   * with how many were left; writes that fail afterwards are logged the same way at once.
   */
  settle(deadline: number): Promise<number>;
}

/** What an entry holds: a delivery's outcome writes, or the trend's report snapshot. */
type HeldWrite = OutcomeWrite | { kind: 'report'; snapshot: ReportSnapshot };

interface Entry {
  key: string;
  /** Absent for a report snapshot: no lease to keep. */
  claim?: OutcomeOwner;
  writes: HeldWrite[];
  /** Message-IDs of the mails sent whose record waits here, for the shutdown line. */
  messageIds: string[];
  leaseExtendedAt?: number;
}

/**
 * Keeps what the relay knows about its sends until the store has recorded it (issue 21). A mail
 * that went out but whose `sent` record could not be written (a full disk, a database briefly
 * away) would otherwise be claimed again when its lease ran out and mailed twice. Writes are tried
 * at once; a refused one is held in memory, in order per delivery, retried with exponential
 * backoff (full jitter, like the deliveries' own retries), and the delivery's lease is extended
 * meanwhile, so only a crash between send and record may ever repeat a mail.
 */
export function createOutcomeLedger(options: OutcomeLedgerOptions): OutcomeLedger {
  const { store, clock, logger: log } = options;
  const max = options.maxUnrecorded ?? MAX_UNRECORDED_OUTCOMES;
  const timers: LedgerTimers = options.timers ?? {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
  // A held claim is extended at least every quarter lease, and retries never wait longer than that.
  const extendEveryMs = Math.max(1, Math.floor(options.leaseMs / 4));
  const policy: RetryPolicy = { maxAttempts: Number.MAX_SAFE_INTEGER, baseMs: Math.min(RETRY_BASE_MS, extendEveryMs), maxDelayMs: Math.min(RETRY_MAX_DELAY_MS, extendEveryMs) };
  /** Insertion order is the order outcomes were held: the oldest are retried first. */
  const entries = new Map<string, Entry>();
  let failures = 0;
  let timer: unknown;
  let round: Promise<boolean> | undefined;
  let lastError: LedgerError | undefined;
  let lastWarnAt: number | undefined;
  let settled = false;

  const changed = () => options.onChange?.(entries.size);

  function hold(key: string, seed: Omit<Entry, 'key' | 'messageIds'>, error: unknown): void {
    const entry: Entry = { key, messageIds: [], ...seed };
    for (const write of seed.writes) noteMessageId(entry, write);
    entries.set(key, entry);
    noteFailure(error);
    log.debug({ deliveryId: seed.claim?.deliveryId, writes: seed.writes.map((w) => w.kind), code: lastError?.code }, 'outcome held in memory until the store records it');
    if (settled) logUnrecorded(entry);
    changed();
    schedule();
  }

  function noteFailure(error: unknown): void {
    const err = error as { code?: unknown; message?: unknown };
    lastError = { code: typeof err?.code === 'string' ? err.code : 'ERROR', message: String(err?.message ?? error).slice(0, 300) };
    const now = clock.now();
    // Once a minute, not per delivery: a full disk fails every write, and the log is on that disk too.
    if (lastWarnAt !== undefined && now - lastWarnAt < UNRECORDED_WARNING_EVERY_MS) return;
    lastWarnAt = now;
    log.warn(
      { unrecorded: entries.size, max, code: lastError.code, error: lastError.message },
      `${entries.size} outcome(s) of sends cannot be recorded: the store refuses writes. They are kept in memory and retried; their mails are not sent again${entries.size >= max ? '; at the cap, no new delivery is claimed' : ''}`,
    );
  }

  function noteMessageId(entry: Entry, write: HeldWrite): void {
    if (write.kind === 'route-sent' && !entry.messageIds.includes(write.messageId)) entry.messageIds.push(write.messageId);
  }

  async function apply(deliveryId: number, write: HeldWrite): Promise<void> {
    switch (write.kind) {
      case 'report':
        return store.saveReport(write.snapshot);
      case 'route-sent':
        return store.markRouteMailSent(deliveryId, write.route, { now: write.now, messageId: write.messageId, response: write.response });
      case 'route-failed':
        return store.markRouteMailFailed(deliveryId, write.route, { now: write.now, error: write.error, code: write.code, permanent: write.permanent });
      case 'sent':
        return store.markSent(deliveryId, { now: write.now, messageId: write.messageId });
      case 'retry':
        return store.markRetry(deliveryId, { now: write.now, nextAttemptAt: write.nextAttemptAt, error: write.error, code: write.code });
      case 'dead':
        return store.markDead(deliveryId, { now: write.now, error: write.error, code: write.code });
    }
  }

  /** Writes what an entry holds, in order (writes added meanwhile included); true once all is recorded and the entry is gone. */
  async function flushEntry(entry: Entry): Promise<boolean> {
    while (entry.writes.length > 0) {
      try {
        await apply(entry.claim?.deliveryId ?? 0, entry.writes[0]!);
      } catch (error) {
        noteFailure(error);
        return false;
      }
      entry.writes.shift();
    }
    entries.delete(entry.key);
    changed();
    return true;
  }

  /** One pass over what waits, oldest first; stops at the first chunk with a refusal (the store is still failing). */
  async function runRound(): Promise<boolean> {
    const waiting = [...entries.values()];
    for (let i = 0; i < waiting.length; i += ROUND_CONCURRENCY) {
      const results = await Promise.all(waiting.slice(i, i + ROUND_CONCURRENCY).map(flushEntry));
      if (results.includes(false)) {
        await extendLeases();
        return false;
      }
    }
    if (entries.size === 0 && lastWarnAt !== undefined) log.info('every held outcome is recorded now');
    return entries.size === 0;
  }

  /** Extends the leases of held deliveries not extended for a quarter lease; a failure is tried again next round. */
  async function extendLeases(): Promise<void> {
    const now = clock.now();
    const due = [...entries.values()].filter((e) => e.claim && (e.leaseExtendedAt === undefined || now - e.leaseExtendedAt >= extendEveryMs));
    const byOwner = new Map<string, Entry[]>();
    for (const e of due) byOwner.set(e.claim!.owner, [...(byOwner.get(e.claim!.owner) ?? []), e]);
    for (const [owner, group] of byOwner) {
      try {
        await store.extendLeases({ ids: group.map((e) => e.claim!.deliveryId), owner, now, leaseMs: options.leaseMs });
        for (const e of group) e.leaseExtendedAt = now;
      } catch (error) {
        // The lease still runs; the next round tries again well before it ends.
        log.debug({ err: error, deliveries: group.length }, 'cannot extend the leases of held outcomes yet');
      }
    }
  }

  function runOnce(): Promise<boolean> {
    round ??= runRound().finally(() => {
      round = undefined;
    });
    return round;
  }

  function schedule(): void {
    if (timer !== undefined || settled || entries.size === 0) return;
    const delay = computeBackoffMs(failures + 1, policy, options.random);
    // In the background only: it must not keep a stopping process alive (settle() takes over then).
    const handle = timers.setTimeout(() => {
      timer = undefined;
      void runOnce().then((done) => {
        failures = done ? 0 : failures + 1;
        if (done) {
          lastError = undefined;
          lastWarnAt = undefined;
        }
        schedule();
      });
    }, delay);
    (handle as { unref?: () => void } | undefined)?.unref?.();
    timer = handle;
  }

  function logUnrecorded(entry: Entry): void {
    if (!entry.claim) {
      const report = entry.writes.find((w) => w.kind === 'report');
      log.error({ report: report?.kind === 'report' ? report.snapshot.dedupKey : undefined }, 'shutdown: the report history entry could not be recorded (the trend of the next report will not compare with it)');
      return;
    }
    const fields = { deliveryId: entry.claim.deliveryId, reportId: entry.claim.reportId, messageIds: entry.messageIds, unrecorded: entry.writes.map((w) => w.kind) };
    if (entry.messageIds.length > 0) log.error(fields, `shutdown: delivery ${entry.claim.deliveryId} was mailed (${entry.messageIds.join(', ')}) but that is not recorded: it may be mailed again at the next start`);
    else log.error(fields, `shutdown: the outcome of delivery ${entry.claim.deliveryId} is not recorded: it will be tried again at the next start`);
  }

  const sleep = (ms: number) => new Promise<void>((resolve) => timers.setTimeout(resolve, ms));

  return {
    async record(claim, write) {
      const key = `delivery:${claim.deliveryId}`;
      const waiting = entries.get(key);
      if (waiting) {
        // Behind an earlier write of the same delivery: order matters (the route before the delivery).
        waiting.writes.push(write);
        noteMessageId(waiting, write);
        return 'held';
      }
      try {
        await apply(claim.deliveryId, write);
        return 'recorded';
      } catch (error) {
        hold(key, { claim, writes: [write] }, error);
        return 'held';
      }
    },
    async saveReport(snapshot) {
      const key = `report:${snapshot.dedupKey}`;
      const write: HeldWrite = { kind: 'report', snapshot };
      const waiting = entries.get(key);
      if (waiting) {
        // Saving replaces by dedup key: the newer snapshot is written after the one waiting.
        waiting.writes.push(write);
        return;
      }
      try {
        await store.saveReport(snapshot);
      } catch (error) {
        hold(key, { writes: [write] }, error);
      }
    },
    holds(deliveryId) {
      return entries.has(`delivery:${deliveryId}`);
    },
    get unrecorded() {
      return entries.size;
    },
    get full() {
      return entries.size >= max;
    },
    get lastError() {
      return entries.size > 0 ? lastError : undefined;
    },
    async settle(deadline) {
      settled = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      let attempt = 1;
      while (entries.size > 0 && clock.now() < deadline) {
        if (await runOnce()) break;
        await sleep(Math.min(Math.max(1, deadline - clock.now()), Math.max(1, computeBackoffMs(attempt, policy, options.random))));
        attempt += 1;
      }
      for (const entry of entries.values()) logUnrecorded(entry);
      return entries.size;
    },
  };
}

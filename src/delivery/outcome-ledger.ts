import type { Clock, FailureCode, Logger } from '../shared';
import type { Store } from '../store';
import type { ReportSnapshot } from '../trend';
import { computeBackoffMs, type RetrySettings } from './retry-policy';

/**
 * Outcomes held in memory at most (deliveries and report snapshots): past it the worker claims no
 * new work rather than send mail it could not record.
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
  | { kind: 'route-failed'; route: string; now: number; error: string; code: FailureCode; permanent: boolean }
  | { kind: 'sent'; now: number; messageId: string }
  | { kind: 'retry'; now: number; nextAttemptAt: number; error: string; code: FailureCode }
  | { kind: 'dead'; now: number; error: string; code: FailureCode };

/** The claim an outcome belongs to: whose lease to keep alive while it waits. */
export interface OutcomeOwner {
  deliveryId: number;
  reportId: number;
  /** The lease owner the worker claimed it as. */
  owner: string;
}

export type LedgerStore = Pick<
  Store,
  'markRouteMailSent' | 'markRouteMailFailed' | 'markSent' | 'markRetry' | 'markDead' | 'saveReport' | 'extendLeases'
>;

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

/** The ledger's state: what waits, in the order it was held, and the retry schedule. */
interface LedgerState {
  readonly options: OutcomeLedgerOptions;
  readonly log: Logger;
  readonly max: number;
  readonly timers: LedgerTimers;
  /** A held claim is extended at least this often (a quarter lease), and retries never wait longer. */
  readonly extendEveryMs: number;
  readonly policy: RetrySettings;
  /** Insertion order is the order outcomes were held: the oldest are retried first. */
  readonly entries: Map<string, Entry>;
  /** Failed retry rounds in a row, for the backoff. */
  failures: number;
  timer: unknown;
  round: Promise<boolean> | undefined;
  lastError: LedgerError | undefined;
  /** When the warning was last logged; kept across episodes, so it is said once a minute at most. */
  lastWarnAt: number | undefined;
  /** This episode (outcomes held since the store last recorded them all) was warned about: its end is logged too. */
  episodeWarned: boolean;
  /** Shutdown has begun: no background retries; whatever is held from now on is logged at once. */
  settled: boolean;
}

/**
 * Keeps what the relay knows about its sends until the store has recorded it. A mail
 * that went out but whose `sent` record could not be written (a full disk, a database briefly
 * away) would otherwise be claimed again when its lease ran out and mailed twice. Writes are tried
 * at once; a refused one is held in memory, in order per delivery, retried with exponential
 * backoff (full jitter, like the deliveries' own retries), and the delivery's lease is extended
 * meanwhile, so only a crash between send and record may ever repeat a mail.
 */
export function createOutcomeLedger(options: OutcomeLedgerOptions): OutcomeLedger {
  const extendEveryMs = Math.max(1, Math.floor(options.leaseMs / 4));
  const state: LedgerState = {
    options,
    log: options.logger,
    max: options.maxUnrecorded ?? MAX_UNRECORDED_OUTCOMES,
    timers: options.timers ?? {
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
    },
    extendEveryMs,
    policy: {
      maxAttempts: Number.MAX_SAFE_INTEGER,
      baseMs: Math.min(RETRY_BASE_MS, extendEveryMs),
      maxDelayMs: Math.min(RETRY_MAX_DELAY_MS, extendEveryMs),
    },
    entries: new Map(),
    failures: 0,
    timer: undefined,
    round: undefined,
    lastError: undefined,
    lastWarnAt: undefined,
    episodeWarned: false,
    settled: false,
  };
  return {
    record: (claim, write) => recordWrite(state, claim, write),
    saveReport: (snapshot) => saveReportSnapshot(state, snapshot),
    holds: (deliveryId) => state.entries.has(`delivery:${deliveryId}`),
    get unrecorded() {
      return state.entries.size;
    },
    get full() {
      return state.entries.size >= state.max;
    },
    get lastError() {
      return state.entries.size > 0 ? state.lastError : undefined;
    },
    settle: (deadline) => settleHeld(state, deadline),
  };
}

async function recordWrite(state: LedgerState, claim: OutcomeOwner, write: OutcomeWrite): Promise<'recorded' | 'held'> {
  const key = `delivery:${claim.deliveryId}`;
  const waiting = state.entries.get(key);
  if (waiting) {
    // Behind an earlier write of the same delivery: order matters (the route before the delivery).
    waiting.writes.push(write);
    noteMessageId(waiting, write);
    return 'held';
  }
  try {
    await applyWrite(state.options.store, claim.deliveryId, write);
    return 'recorded';
  } catch (error) {
    hold(state, key, { claim, writes: [write] }, error);
    return 'held';
  }
}

async function saveReportSnapshot(state: LedgerState, snapshot: ReportSnapshot): Promise<void> {
  const key = `report:${snapshot.dedupKey}`;
  const write: HeldWrite = { kind: 'report', snapshot };
  const waiting = state.entries.get(key);
  if (waiting) {
    // Saving replaces by dedup key: the newer snapshot is written after the one waiting.
    waiting.writes.push(write);
    return;
  }
  try {
    await state.options.store.saveReport(snapshot);
  } catch (error) {
    hold(state, key, { writes: [write] }, error);
  }
}

function notifyChange(state: LedgerState): void {
  state.options.onChange?.(state.entries.size);
}

function hold(state: LedgerState, key: string, seed: Omit<Entry, 'key' | 'messageIds'>, error: unknown): void {
  const entry: Entry = { key, messageIds: [], ...seed };
  for (const write of seed.writes) noteMessageId(entry, write);
  state.entries.set(key, entry);
  noteFailure(state, error);
  state.log.debug(
    { deliveryId: seed.claim?.deliveryId, writes: seed.writes.map((w) => w.kind), code: state.lastError?.code },
    'outcome held in memory until the store records it',
  );
  if (state.settled) logUnrecorded(state.log, entry);
  notifyChange(state);
  scheduleRetry(state);
}

function noteFailure(state: LedgerState, error: unknown): void {
  const err = error as { code?: unknown; message?: unknown };
  const lastError = { code: typeof err?.code === 'string' ? err.code : 'ERROR', message: String(err?.message ?? error).slice(0, 300) };
  state.lastError = lastError;
  const now = state.options.clock.now();
  // Once a minute, not per delivery: a full disk fails every write, and the log is on that disk too.
  // The spacing holds across episodes too: a store that fails on and off must not log once per recovery.
  if (state.lastWarnAt !== undefined && now - state.lastWarnAt < UNRECORDED_WARNING_EVERY_MS) return;
  state.lastWarnAt = now;
  state.episodeWarned = true;
  const waiting = state.entries.size;
  state.log.warn(
    { unrecorded: waiting, max: state.max, code: lastError.code, error: lastError.message },
    `${waiting} outcome(s) of sends cannot be recorded: the store refuses writes. They are kept in memory and retried; their mails are not sent again${waiting >= state.max ? '; at the cap, no new delivery is claimed' : ''}`,
  );
}

function noteMessageId(entry: Entry, write: HeldWrite): void {
  if (write.kind === 'route-sent' && !entry.messageIds.includes(write.messageId)) entry.messageIds.push(write.messageId);
}

async function applyWrite(store: LedgerStore, deliveryId: number, write: HeldWrite): Promise<void> {
  switch (write.kind) {
    case 'report':
      return store.saveReport(write.snapshot);
    case 'route-sent':
      return store.markRouteMailSent(deliveryId, write.route, { now: write.now, messageId: write.messageId, response: write.response });
    case 'route-failed':
      return store.markRouteMailFailed(deliveryId, write.route, {
        now: write.now,
        error: write.error,
        code: write.code,
        permanent: write.permanent,
      });
    case 'sent':
      return store.markSent(deliveryId, { now: write.now, messageId: write.messageId });
    case 'retry':
      return store.markRetry(deliveryId, { now: write.now, nextAttemptAt: write.nextAttemptAt, error: write.error, code: write.code });
    case 'dead':
      return store.markDead(deliveryId, { now: write.now, error: write.error, code: write.code });
  }
}

/** Writes what an entry holds, in order (writes added meanwhile included); true once all is recorded and the entry is gone. */
async function flushEntry(state: LedgerState, entry: Entry): Promise<boolean> {
  while (entry.writes.length > 0) {
    try {
      await applyWrite(state.options.store, entry.claim?.deliveryId ?? 0, entry.writes[0]);
    } catch (error) {
      noteFailure(state, error);
      return false;
    }
    entry.writes.shift();
  }
  state.entries.delete(entry.key);
  notifyChange(state);
  return true;
}

/** One pass over what waits, oldest first; stops at the first chunk with a refusal (the store is still failing). */
async function runRound(state: LedgerState): Promise<boolean> {
  const waiting = [...state.entries.values()];
  for (let i = 0; i < waiting.length; i += ROUND_CONCURRENCY) {
    const results = await Promise.all(waiting.slice(i, i + ROUND_CONCURRENCY).map((entry) => flushEntry(state, entry)));
    if (results.includes(false)) {
      await extendHeldLeases(state);
      return false;
    }
  }
  if (state.entries.size === 0 && state.episodeWarned) state.log.info('every held outcome is recorded now');
  return state.entries.size === 0;
}

/** Extends the leases of held deliveries not extended for a quarter lease; a failure is tried again next round. */
async function extendHeldLeases(state: LedgerState): Promise<void> {
  const now = state.options.clock.now();
  const due = [...state.entries.values()].filter(
    (e) => e.claim && (e.leaseExtendedAt === undefined || now - e.leaseExtendedAt >= state.extendEveryMs),
  );
  const byOwner = new Map<string, Entry[]>();
  for (const e of due) byOwner.set(e.claim!.owner, [...(byOwner.get(e.claim!.owner) ?? []), e]);
  for (const [owner, group] of byOwner) {
    try {
      await state.options.store.extendLeases({ ids: group.map((e) => e.claim!.deliveryId), owner, now, leaseMs: state.options.leaseMs });
      for (const e of group) e.leaseExtendedAt = now;
    } catch (error) {
      // The lease still runs; the next round tries again well before it ends.
      state.log.debug({ err: error, deliveries: group.length }, 'cannot extend the leases of held outcomes yet');
    }
  }
}

/** One retry round at a time: a caller during a round shares it. */
function runOnce(state: LedgerState): Promise<boolean> {
  state.round ??= runRound(state).finally(() => {
    state.round = undefined;
  });
  return state.round;
}

function scheduleRetry(state: LedgerState): void {
  if (state.timer !== undefined || state.settled || state.entries.size === 0) return;
  const delay = computeBackoffMs(state.failures + 1, state.policy, state.options.random);
  // In the background only: it must not keep a stopping process alive (settle() takes over then).
  const handle = state.timers.setTimeout(() => {
    state.timer = undefined;
    void runOnce(state).then((done) => {
      state.failures = done ? 0 : state.failures + 1;
      if (done) {
        state.lastError = undefined;
        state.episodeWarned = false;
      }
      scheduleRetry(state);
    });
  }, delay);
  (handle as { unref?: () => void } | undefined)?.unref?.();
  state.timer = handle;
}

/** For shutdown: retries until `deadline`, then logs what is still unrecorded; resolves with how many entries are left. */
async function settleHeld(state: LedgerState, deadline: number): Promise<number> {
  const { clock } = state.options;
  state.settled = true;
  if (state.timer !== undefined) state.timers.clearTimeout(state.timer);
  state.timer = undefined;
  const sleep = (ms: number) => new Promise<void>((resolve) => state.timers.setTimeout(resolve, ms));
  let attempt = 1;
  while (state.entries.size > 0 && clock.now() < deadline) {
    if (await runOnce(state)) break;
    await sleep(Math.min(Math.max(1, deadline - clock.now()), Math.max(1, computeBackoffMs(attempt, state.policy, state.options.random))));
    attempt += 1;
  }
  for (const entry of state.entries.values()) logUnrecorded(state.log, entry);
  return state.entries.size;
}

function logUnrecorded(log: Logger, entry: Entry): void {
  if (!entry.claim) {
    const report = entry.writes.find((w) => w.kind === 'report');
    log.error(
      { report: report?.kind === 'report' ? report.snapshot.dedupKey : undefined },
      'shutdown: the report history entry could not be recorded (the trend of the next report will not compare with it)',
    );
    return;
  }
  const fields = {
    deliveryId: entry.claim.deliveryId,
    reportId: entry.claim.reportId,
    messageIds: entry.messageIds,
    unrecorded: entry.writes.map((w) => w.kind),
  };
  if (entry.messageIds.length > 0)
    log.error(
      fields,
      `shutdown: delivery ${entry.claim.deliveryId} was mailed (${entry.messageIds.join(', ')}) but that is not recorded: it may be mailed again at the next start`,
    );
  else
    log.error(
      fields,
      `shutdown: the outcome of delivery ${entry.claim.deliveryId} is not recorded: it will be tried again at the next start`,
    );
}

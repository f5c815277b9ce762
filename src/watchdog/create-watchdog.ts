import { coalesceRuns, createRepeatingTask, type Clock, type Logger } from '../shared';
import type { Store } from '../store';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { buildWatchdogAlert } from './watchdog-alert';

export interface WatchdogOptions {
  store: Pick<Store, 'lastReportReceivedAt' | 'getWatchdogState' | 'transitionWatchdog' | 'getCatchUpState'>;
  clock: Clock;
  logger: Logger;
  /** EXPECT_REPORT_EVERY: the longest silence before the recipients are told. */
  expectEveryMs: number;
  /** How often the silence is measured (default: a tenth of expectEveryMs, between 1 s and 60 s). */
  checkEveryMs?: number;
  /** An alert was queued in the outbox (wakes the worker). */
  onQueued?: (id: number) => void;
  /** The named NetBox source this watchdog watches (its own state, its own reports); absent: the default source. */
  source?: string;
  /** The source's catch-up runs: the overdue mail says whether NetBox itself has no report (it asked). */
  catchUp?: boolean;
}

export interface Watchdog {
  /** Measures the silence now; resolves with the alert queued, if this call queued one. */
  evaluate(): Promise<'overdue' | 'resumed' | undefined>;
  start(): void;
  stop(): void;
}

/** With the catch-up on: when it last listed the source's reports in NetBox (null: never yet). */
async function readNetboxCheck(options: WatchdogOptions): Promise<{ netboxCheckedAt?: number | null }> {
  if (!options.catchUp) return {};
  return { netboxCheckedAt: (await options.store.getCatchUpState(options.source ?? DEFAULT_SOURCE_NAME))?.succeededAt ?? null };
}

/**
 * Makes silence visible: NetBox drops a failed webhook without retrying, so a report that never
 * arrives would otherwise go unnoticed. When no report arrived within `expectEveryMs`, one
 * "no compliance report received since …" mail is queued; when one arrives again, one "reports are
 * arriving again" mail. The state lives in the store and moves by compare-and-set, in the same
 * transaction that queues the mail, so replicas sharing a store send each mail once, and the mail
 * goes through the outbox (retried like any report, never lost to a crash).
 */
export function createWatchdog(options: WatchdogOptions): Watchdog {
  const { store, clock, logger } = options;
  const checkEveryMs = options.checkEveryMs ?? Math.min(60_000, Math.max(1_000, Math.floor(options.expectEveryMs / 10)));

  async function evaluateOnce(): Promise<'overdue' | 'resumed' | undefined> {
    const now = clock.now();
    const { source } = options;
    const state = await store.getWatchdogState(now, source);
    const last = await store.lastReportReceivedAt(source);
    if (state.state === 'ok') {
      // Before any report, the silence counts from the watchdog's first run against this store.
      const baseline = last ?? state.createdAt;
      if (now - baseline <= options.expectEveryMs) return undefined;
      const alert = buildWatchdogAlert({
        kind: 'overdue',
        silentSince: baseline,
        expectEveryMs: options.expectEveryMs,
        detectedAt: now,
        source,
        ...(await readNetboxCheck(options)),
      });
      const result = await store.transitionWatchdog({
        expectedVersion: state.version,
        state: 'overdue',
        since: baseline,
        now,
        alert,
        source,
      });
      if (!result.won) return undefined;
      logger.warn(
        { silentSince: new Date(baseline).toISOString(), expectEveryMs: options.expectEveryMs, deliveryId: result.alertId, source },
        'no compliance report received in time: the recipients are told',
      );
      options.onQueued?.(result.alertId!);
      return 'overdue';
    }
    const since = state.since ?? state.createdAt;
    if (last === null || last <= since) return undefined;
    const alert = buildWatchdogAlert({
      kind: 'resumed',
      silentSince: since,
      resumedAt: last,
      expectEveryMs: options.expectEveryMs,
      detectedAt: now,
      source,
      ...(await readNetboxCheck(options)),
    });
    // `since` is kept on the ok state: the next silence is measured from the new report, not from it.
    const result = await store.transitionWatchdog({ expectedVersion: state.version, state: 'ok', since: last, now, alert, source });
    if (!result.won) return undefined;
    logger.info(
      { silentSince: new Date(since).toISOString(), resumedAt: new Date(last).toISOString(), deliveryId: result.alertId, source },
      'compliance reports are arriving again: the recipients are told',
    );
    options.onQueued?.(result.alertId!);
    return 'resumed';
  }

  // One evaluation at a time in this process; the compare-and-set settles races between processes.
  const evaluate = coalesceRuns(evaluateOnce);
  const fail = (error: unknown) => logger.error({ err: error }, 'watchdog: cannot read or update its state; will try again');
  return { evaluate, ...createRepeatingTask(() => void evaluate().catch(fail), checkEveryMs) };
}

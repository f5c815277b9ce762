import { coalesceRuns, createRepeatingTask, type Clock, type Logger } from '../shared';
import { buildJobDelivery, type Store } from '../store';
import { DEFAULT_SOURCE_NAME } from '../webhook';

export interface WatchdogOptions {
  store: Pick<Store, 'lastReportReceivedAt' | 'getWatchdogState' | 'transitionWatchdog' | 'getCatchUpState'>;
  clock: Clock;
  logger: Logger;
  onQueued?: (id: number) => void;
  /** `expectEveryMs`: the longest silence before mailing; `source` absent: the default; `catchUp`: the mail says what NetBox has. */
  sources: { expectEveryMs: number; source?: string; catchUp?: boolean }[];
}

export type Watchdog = ReturnType<typeof createWatchdog>;

/**
 * Makes silence visible (NetBox never retries a webhook): a mail when no report came within `expectEveryMs`, one when they
 * resume. Compare-and-set in the mail's transaction: replicas send each mail once, and a crash loses none.
 */
export function createWatchdog(options: WatchdogOptions) {
  const { store, clock, logger } = options;
  const shortestMs = Math.min(...options.sources.map((s) => s.expectEveryMs));
  const checkEveryMs = Math.min(60_000, Math.max(1_000, Math.floor(shortestMs / 10)));

  async function evaluateSource(watched: WatchdogOptions['sources'][number]): Promise<'overdue' | 'resumed' | undefined> {
    const now = clock.now();
    const { source, expectEveryMs } = watched;
    const state = await store.getWatchdogState(now, source);
    const last = await store.lastReportReceivedAt(source);
    const kind = state.state === 'ok' ? 'overdue' : 'resumed';
    // Before any report, the silence counts from the watchdog's first run against this store.
    const silentSince = kind === 'overdue' ? (last ?? state.createdAt) : (state.since ?? state.createdAt);
    if (kind === 'overdue' ? now - silentSince <= expectEveryMs : last === null || last <= silentSince) return undefined;
    const resumedAt = kind === 'resumed' ? last! : undefined;
    const alert = buildJobDelivery({
      kind: 'watchdog',
      alert: {
        kind,
        silentSince,
        ...(resumedAt === undefined ? {} : { resumedAt }),
        expectEveryMs,
        detectedAt: now,
        source,
        // With the catch-up on: when it last listed the source's reports in NetBox (null: never yet).
        ...(watched.catchUp ? { netboxCheckedAt: (await store.getCatchUpState(source ?? DEFAULT_SOURCE_NAME))?.succeededAt ?? null } : {}),
      },
    });
    // Resumed, `since` is kept on the ok state: the next silence is measured from the new report, not from it.
    const next =
      resumedAt === undefined ? ({ state: 'overdue', since: silentSince } as const) : ({ state: 'ok', since: resumedAt } as const);
    const result = await store.transitionWatchdog({ expectedVersion: state.version, ...next, now, alert, source });
    if (!result.won) return undefined;
    const since = new Date(silentSince).toISOString();
    if (resumedAt === undefined) {
      logger.warn(
        { silentSince: since, expectEveryMs, deliveryId: result.alertId, source },
        'no compliance report received in time: the recipients are told',
      );
    } else {
      logger.info(
        { silentSince: since, resumedAt: new Date(resumedAt).toISOString(), deliveryId: result.alertId, source },
        'compliance reports are arriving again: the recipients are told',
      );
    }
    options.onQueued?.(result.alertId!);
    return kind;
  }

  /** Measures every source's silence now (one run at a time; compare-and-set between processes); resolves with the first alert queued. */
  const evaluate = coalesceRuns(async () => (await Promise.all(options.sources.map(evaluateSource))).find((r) => r !== undefined));
  const fail = (error: unknown) => logger.error({ err: error }, 'watchdog: cannot read or update its state; will try again');
  return { evaluate, ...createRepeatingTask(() => void evaluate().catch(fail), checkEveryMs) };
}

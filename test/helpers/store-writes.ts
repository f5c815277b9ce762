/**
 * A delivery's outcome as tests set it up, written the one way the worker writes it: each helper is
 * one {@link Store.settleBatch} of a single delivery (the store has no per-row outcome writes), so a
 * seeded state goes through the same transaction as a real attempt's.
 */
import type { DeliveryStateChange, NewRouteMail, RouteMailOutcome, RouteMailRecord, SentMessageCopy, Store } from '../../src/store';
import { buildRecordedTrend, readTrendHistory, type RecordedTrend, type ReportHistory, type ReportSnapshot } from '../../src/trend';

/** Settles one delivery: its plan (kept only if it has none yet), route mails, sent copies and state. */
async function settleOne(
  store: Store,
  id: number,
  now: number,
  state: DeliveryStateChange,
  writes: { plan?: NewRouteMail[]; routes?: RouteMailOutcome[]; sent?: SentMessageCopy[] } = {},
): Promise<void> {
  await store.settleBatch({
    now,
    deliveries: [{ id, plan: writes.plan, routes: writes.routes ?? [], sent: writes.sent ?? [], state }],
    reports: [],
  });
}

export function markSent(store: Store, id: number, result: { now: number; messageId: string }): Promise<void> {
  return settleOne(store, id, result.now, { state: 'sent', messageId: result.messageId });
}

export function markRetry(
  store: Store,
  id: number,
  result: { now: number; nextAttemptAt: number; error: string; code: string },
): Promise<void> {
  const { now, ...change } = result;
  return settleOne(store, id, now, { state: 'retrying', ...change });
}

export function markDead(store: Store, id: number, result: { now: number; error: string; code: string }): Promise<void> {
  const { now, ...change } = result;
  return settleOne(store, id, now, { state: 'dead', ...change });
}

/**
 * Records a delivery's route plan (a plan recorded before is kept) and resolves with the plan as stored.
 * A settle always moves the delivery: by default it is retrying and due at once, as after a first
 * attempt that planned and sent nothing yet.
 */
export async function recordPlan(
  store: Store,
  id: number,
  decisions: NewRouteMail[],
  now: number,
  state: DeliveryStateChange = { state: 'retrying', nextAttemptAt: now, error: 'planned, not sent yet', code: 'PLANNED' },
): Promise<RouteMailRecord[]> {
  await settleOne(store, id, now, state, { plan: decisions });
  return store.listRouteMails([id]);
}

/**
 * One route mail's outcome. The delivery follows it unless told otherwise, as a delivery of that one
 * route would: sent, retrying now (the mail stays pending), or dead (the mail failed for good).
 */
export function markRouteMail(
  store: Store,
  id: number,
  outcome: RouteMailOutcome,
  now: number,
  state?: DeliveryStateChange,
): Promise<void> {
  const change: DeliveryStateChange =
    state ??
    (outcome.state === 'sent'
      ? { state: 'sent', messageId: outcome.messageId }
      : outcome.state === 'pending'
        ? { state: 'retrying', nextAttemptAt: now, error: outcome.error, code: outcome.code }
        : { state: 'dead', error: outcome.error, code: outcome.code });
  return settleOne(store, id, now, change, { routes: [outcome] });
}

/** Keeps the copy of a mail the server accepted (replacing an earlier copy of its route); the delivery is sent then, by default. */
export function saveSentCopy(store: Store, id: number, message: SentMessageCopy, state?: DeliveryStateChange): Promise<void> {
  const change: DeliveryStateChange = state ?? { state: 'sent', messageId: message.messageId ?? `<copy-${id}@test>` };
  return settleOne(store, id, message.sentAt, change, { sent: [message] });
}

/**
 * Stores a report's snapshot for the trend the one way the worker does: in a
 * {@link Store.settleBatch} (with no delivery), as the reports composed for a batch.
 */
export function saveReport(store: Store, snapshot: ReportSnapshot): Promise<void> {
  return store.settleBatch({ now: 0, deliveries: [], reports: [snapshot] });
}

/** The store as the trend reads and writes it (see {@link saveReport}). */
export function reportHistoryOf(store: Store): ReportHistory {
  return {
    findReportBefore: (series, before, options) => store.findReportBefore(series, before, options),
    listReportsBefore: (series, before, limit) => store.listReportsBefore(series, before, limit),
    findReport: (dedupKey) => store.findReport(dedupKey),
    saveReport: (snapshot) => saveReport(store, snapshot),
  };
}

/** Compares `current` with its series' history and stores it, as the composer does (no waivers, no pair states). */
export async function recordTrend(history: ReportHistory, current: ReportSnapshot): Promise<RecordedTrend> {
  const recorded = buildRecordedTrend(current, await readTrendHistory(history, current));
  await history.saveReport(recorded.current);
  return recorded;
}

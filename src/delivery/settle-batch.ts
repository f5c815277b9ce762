import { parseFailureCode, type FailureCatalogue, type Logger } from '../shared';
import { buildFailureClass, type FailureClass } from '../notify';
import type { DeliverySettlement, DeliveryStateChange, RouteMailOutcome, SentMessageCopy, SettledBatch } from '../store';
import type { BatchItem, RouteMail, Stage } from './compose-batch';
import { computeBackoffMs, type NextState } from './retry-policy';

/** The settle's write, while the store refuses it: how many deliveries wait, and why (for /readyz, the gauge, the banner). */
export type UnrecordedStatus = { count: number; code?: string; message?: string };

const UNRECORDED_WARNING_EVERY_MS = 60_000;
const REWRITE_BASE_MS = 200;

export interface SettleState {
  unrecorded: UnrecordedStatus;
  lastWarnAt?: number;
  /** Set by a stop: past it, a batch still refused is given up, each mail that may repeat logged. */
  deadline?: number;
}

/**
 * The settle stage: decides each delivery's state and writes the batch with its reports in one transaction. A refused
 * write is retried (leases kept, nothing new claimed), so a sent mail is never sent again because its record failed.
 * False when a stop's deadline came first.
 */
export async function settleBatch(stage: Stage, state: SettleState, items: BatchItem[], started: number): Promise<boolean> {
  const now = stage.clock.now();
  const settling = items.filter((item) => !item.abandoned);
  const batch: SettledBatch = {
    now,
    deliveries: settling.map((item) => decideSettlement(stage, item, now)),
    reports: stage.history.take(items.map((i) => i.delivery.dedupKey)),
  };
  if (batch.deliveries.length === 0 && batch.reports.length === 0) return true;
  if (!(await writeBatch(stage, state, batch))) return false;
  for (const item of settling) announce(stage, item, now - started);
  return true;
}

/** Where one delivery goes, from what its route mails came to; kept on the item as `settled` and `failure`. */
function decideSettlement(stage: Stage, item: BatchItem, now: number): DeliverySettlement {
  const { delivery, composeFailure } = item;
  // A delivery that could not be composed has no route mails: its rows are empty.
  const recorded = collectSettlement(stage, item, now);
  const settle = (state: DeliveryStateChange, failure?: FailureClass): DeliverySettlement => {
    item.settled = state;
    item.failure = failure;
    return { ...recorded, state };
  };
  if (composeFailure) {
    const at = retryAtOf(stage.policy.decide({ kind: 'not-built', failure: composeFailure }, delivery.attempts, now));
    const { message: error, code } = composeFailure;
    const state: DeliveryStateChange =
      at === undefined ? { state: 'dead', error, code } : { state: 'retrying', nextAttemptAt: at, error, code };
    return settle(state, composeFailure);
  }
  const failures: { route: string; failure: FailureClass }[] = [];
  let retry: RouteMail | undefined;
  let untried = false;
  // Every slice of this attempt decides, the ones recorded earlier too.
  for (const mail of item.mails) {
    if (!mail.row) untried = true;
    else if (mail.row.state === 'failed') failures.push({ route: mail.route, failure: mail.failure! });
    else if (mail.row.state === 'pending') retry ??= mail;
  }
  // Held for an operator: stored due now (the pause in memory holds it), so the restart with the fix sends it at once.
  const queueWait = item.deferredUntil !== undefined && stage.policy.held ? now : item.deferredUntil;
  if (retry) {
    const { route, failure, next } = retry;
    const error = `route ${route}: ${failure!.message}`;
    return settle({ state: 'retrying', nextAttemptAt: queueWait ?? retryAtOf(next!)!, error, code: failure!.code }, failure);
  }
  if (untried) {
    const error = 'the mail server was unavailable: waiting for it in queue order';
    return settle({ state: 'retrying', nextAttemptAt: queueWait ?? now, error, code: 'SMTP_PAUSED' });
  }
  // A route that failed for good in an earlier attempt (and was not tried again) fails the delivery too.
  const tried = new Set(item.mails.map((m) => m.route));
  for (const entry of item.plan)
    if (entry.state === 'failed' && !tried.has(entry.route))
      failures.push({ route: entry.route, failure: toEarlierFailure(stage.failures, entry) });
  if (failures.length > 0) {
    const { failure } = failures[0];
    const error = describeFailedRoutes(delivery.attempts, failures);
    return settle({ state: 'dead', error, code: failure.code }, { ...failure, message: error });
  }
  const sentRow = item.mails.map((m) => m.row).find((row) => row?.state === 'sent');
  const thisAttempt = sentRow?.state === 'sent' ? sentRow.messageId : '';
  return settle({ state: 'sent', messageId: item.plan.find((p) => p.state === 'sent' && p.messageId)?.messageId ?? thisAttempt });
}

/**
 * Records the route mails built so far (rows and sent copies, states unchanged), then drops their bytes; retried as a
 * settle is. False when a stop's deadline came first.
 */
export async function recordSlices(stage: Stage, state: SettleState, items: BatchItem[]): Promise<boolean> {
  const now = stage.clock.now();
  const deliveries = items.map((item) => collectSettlement(stage, item, now));
  if (!(await writeBatch(stage, state, { now, deliveries, reports: [] }))) return false;
  for (const item of items) for (const mail of item.mails) if (mail.row) mail.mail = undefined;
  return true;
}

/** The delivery's new plan, its route mails' rows that came to something since the last write, and the sent copies. */
function collectSettlement(stage: Stage, item: BatchItem, now: number): DeliverySettlement {
  const routes: RouteMailOutcome[] = [];
  const sent: SentMessageCopy[] = [];
  for (const mail of item.mails) {
    const { route, accepted, failure, mail: m } = mail;
    if (mail.row) continue;
    if (accepted) {
      mail.row = { route, state: 'sent', messageId: m!.messageId, response: accepted.response };
      const { messageId, raw, envelope, subject } = m!;
      sent.push({
        route,
        messageId,
        raw,
        envelopeFrom: envelope.from,
        envelopeTo: envelope.to,
        subject,
        response: accepted.response,
        sentAt: accepted.at,
      });
    } else if (failure) {
      mail.next ??= stage.policy.decide({ kind: 'not-built', failure }, item.delivery.attempts, now);
      mail.row = { route, state: retryAtOf(mail.next) === undefined ? 'failed' : 'pending', error: failure.message, code: failure.code };
    } else continue;
    routes.push(mail.row);
  }
  return { id: item.delivery.id, ...(item.newPlan ? { plan: item.newPlan } : {}), routes, sent };
}

/** When an attempt that failed is tried again; undefined: never. */
function retryAtOf(next: NextState): number | undefined {
  return next.next === 'backoff' ? next.at : next.next === 'pause' || next.next === 'held' ? next.until : undefined;
}

/** A dead delivery's error: every route that failed, each with its own error. */
function describeFailedRoutes(attempts: number, failures: { route: string; failure: FailureClass }[]): string {
  const parts = failures.map(({ route, failure }) => {
    const message = failure.kind === 'transient' ? `gave up after ${attempts} attempts: ${failure.message}` : failure.message;
    return `route ${route}: ${message}`;
  });
  return parts.length === 1 ? parts[0] : `${parts.length} routes failed: ${parts.join('; ')}`;
}

function toEarlierFailure(catalogue: FailureCatalogue, { lastError, lastErrorCode }: RouteMail): FailureClass {
  // Stored by this relay, so from its catalogue; a code an older version stored reads as UNKNOWN. It failed for good.
  const failure = buildFailureClass(parseFailureCode(lastErrorCode, catalogue), lastError ?? 'failed earlier', catalogue);
  return { ...failure, kind: 'permanent', configProblem: false, scope: 'message' };
}

/** Writes the batch; a refusal is retried with backoff (within a quarter lease) until it lands or a stop's deadline passes. */
async function writeBatch(stage: Stage, state: SettleState, batch: SettledBatch): Promise<boolean> {
  const capMs = Math.max(1, Math.floor(stage.leaseMs / 4));
  const backoff = { maxAttempts: Infinity, baseMs: Math.min(REWRITE_BASE_MS, capMs), maxDelayMs: capMs };
  for (let attempt = 1; ; attempt += 1) {
    try {
      await stage.store.settleBatch(batch);
      if (state.unrecorded.count > 0) stage.logger.info('every held outcome is recorded now');
      state.unrecorded = { count: 0 };
      return true;
    } catch (error) {
      const err = error as { code?: unknown; message?: unknown };
      state.unrecorded = {
        count: batch.deliveries.length,
        code: typeof err.code === 'string' ? err.code : 'ERROR',
        message: String(err.message ?? error).slice(0, 300),
      };
      const { count, code, message } = state.unrecorded;
      const now = stage.clock.now();
      // Once a minute, not per delivery: a full disk fails every write, and the log is on that disk too.
      if (state.lastWarnAt === undefined || now - state.lastWarnAt >= UNRECORDED_WARNING_EVERY_MS) {
        state.lastWarnAt = now;
        stage.logger.warn(
          { unrecorded: count, code, error: message },
          `${count} outcome(s) of sends cannot be recorded: the store refuses writes. They are kept in memory and retried; their mails are not sent again, and no new delivery is claimed meanwhile`,
        );
      }
      if (state.deadline !== undefined && now >= state.deadline) {
        logGivenUp(stage.logger, batch);
        return false;
      }
      const wait = Math.max(1, computeBackoffMs(attempt, backoff, stage.random));
      await new Promise((resolve) =>
        setTimeout(resolve, state.deadline === undefined ? wait : Math.min(wait, Math.max(1, state.deadline - now))),
      );
    }
  }
}

/** A stop came before the store took the batch: each mail that went out may go again at the next start. */
function logGivenUp(logger: Logger, batch: SettledBatch): void {
  for (const d of batch.deliveries) {
    const messageIds = d.sent.map((m) => m.messageId ?? '');
    const fields = { deliveryId: d.id, messageIds, unrecorded: d.state?.state };
    if (messageIds.length > 0)
      logger.error(
        fields,
        `shutdown: delivery ${d.id} was mailed (${messageIds.join(', ')}) but that is not recorded: it may be mailed again at the next start`,
      );
    else logger.error(fields, `shutdown: the outcome of delivery ${d.id} is not recorded: it will be tried again at the next start`);
  }
}

function announce(stage: Stage, item: BatchItem, durationMs: number): void {
  const { log, failure } = item;
  const change = item.settled!;
  if (change.state === 'sent') {
    if (!change.messageId) {
      const reasons = Object.fromEntries(item.plan.map((p) => [p.route, p.reason]));
      log.info({ reasons }, 'no mail for this report: every route suppressed it or did not match');
    }
    return stage.observe?.(item, durationMs);
  }
  if (change.state === 'retrying' && change.code === 'SMTP_PAUSED') {
    // Not an attempt of its own: it waited for the server with the queue.
    log.debug({ nextAttemptAt: new Date(change.nextAttemptAt).toISOString() }, 'not sent: sending is paused; waiting with the queue');
    return;
  }
  if (change.state === 'retrying') {
    const fields = { code: change.code, error: change.error, nextAttemptAt: new Date(change.nextAttemptAt).toISOString() };
    if (failure!.configProblem) log.error(fields, 'send failed: configuration problem (will retry)');
    else log.warn(fields, item.composeFailure ? 'cannot compose the mail now (nothing was sent); will retry' : 'send failed; will retry');
  } else {
    // A configuration problem never comes here: it is held for the operator's fix (retry-policy.ts).
    log.error({ code: change.code, error: change.error }, 'delivery is dead: the failure is permanent');
  }
  stage.observe?.(item, durationMs);
}

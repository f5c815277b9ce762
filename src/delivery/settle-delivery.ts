import { parseFailureCode, type Logger } from '../shared';
import type { ClaimedDelivery, RouteMailRecord } from '../store';
import type { FailureClass } from '../notify';
import { recordOutcome, type DeliveryContext } from './delivery-context';
import type { RouteFailure, SendReport } from './send-route-mails';

/** How an attempt ends, decided from what the send step did. */
export type Settlement =
  /** Nothing was tried because too many outcomes wait: the claim is left to expire. */
  | { kind: 'held-back' }
  /** Nothing was tried because the server is paused: it waits with the queue until `until`. */
  | { kind: 'deferred'; until: number }
  | { kind: 'retry'; failed: RouteFailure; nextAttemptAt: number }
  | { kind: 'dead'; failure: FailureClass }
  | { kind: 'done' };

export interface SettleInput {
  delivery: ClaimedDelivery;
  plan: RouteMailRecord[];
  report: SendReport;
  /** When the attempt started (claim time), for the outcome's duration. */
  started: number;
  log: Logger;
}

/**
 * The settle step: records how the attempt ends (sent, suppressed, retry at a time, or dead), logs
 * it, and reports the outcome. Runs after the send permit is released: the records here are about
 * the delivery, not about a mail in flight.
 */
export async function settleDelivery(context: DeliveryContext, input: SettleInput): Promise<void> {
  const now = context.clock.now();
  const settlement = decideSettlement(input.delivery, input.plan, input.report);
  const { delivery, log } = input;
  switch (settlement.kind) {
    case 'held-back':
      log.warn(
        { sentRoutes: input.report.sentRoutes },
        'not sent now: too many outcomes wait to be recorded; the delivery is claimed again when its lease ends',
      );
      return;
    case 'deferred':
      await recordOutcome(context, delivery, {
        kind: 'retry',
        now,
        nextAttemptAt: settlement.until,
        error: 'the SMTP server was unavailable: waiting for it in queue order',
        code: 'SMTP_PAUSED',
      });
      log.debug({ nextAttemptAt: new Date(settlement.until).toISOString() }, 'not sent: the SMTP server is paused; waiting with the queue');
      return;
    case 'retry':
      return settleRetry(context, input, settlement, now);
    case 'dead':
      return settleDead(context, { delivery, failure: settlement.failure, started: input.started, log });
    case 'done':
      return settleDone(context, input, now);
  }
}

/**
 * How the attempt ends, from what the retry policy decided for its routes (retry-policy.ts): the
 * first route that may succeed later decides when the delivery is tried again (at the pause's end
 * when the server failed, so the queue keeps its order); otherwise a route failed for good (now or
 * earlier) makes it dead; otherwise it is done.
 */
export function decideSettlement(delivery: ClaimedDelivery, plan: RouteMailRecord[], report: SendReport): Settlement {
  if (report.stopped?.reason === 'held-back') return { kind: 'held-back' };
  // Deferred before its first send of this attempt: nothing was tried, so nothing is decided yet (a
  // route that already failed for good is recorded as such and settled when the delivery finishes).
  if (report.stopped?.reason === 'deferred') return { kind: 'deferred', until: report.stopped.until };
  const { transient } = report;
  const next = transient?.next;
  if (transient && next && next.next !== 'dead' && next.next !== 'sent') {
    const at = next.next === 'backoff' ? next.at : next.until;
    return { kind: 'retry', failed: transient, nextAttemptAt: report.pausedUntil ?? at };
  }
  const failed = report.permanent ?? findEarlierPermanent(plan) ?? transient;
  if (!failed) return { kind: 'done' };
  return { kind: 'dead', failure: { ...failed.failure, message: describeFailedRoutes(delivery, plan, report, failed) } };
}

/**
 * A dead delivery's error: every route that failed, this attempt's and those that failed for good
 * earlier, each with its own error (the first, `failed`, gives the code).
 */
function describeFailedRoutes(delivery: ClaimedDelivery, plan: RouteMailRecord[], report: SendReport, failed: RouteFailure): string {
  const all = [failed, ...report.failures];
  for (const mail of plan) if (mail.state === 'failed') all.push(toRouteFailure(mail));
  // A route that failed earlier and was sent in this attempt (a requeue tries it again) did not fail.
  const seen = new Set<string>(report.sentRoutes);
  const parts: string[] = [];
  for (const { route, failure } of all) {
    if (seen.has(route)) continue;
    seen.add(route);
    const message = failure.kind === 'transient' ? `gave up after ${delivery.attempts} attempts: ${failure.message}` : failure.message;
    parts.push(`route ${route}: ${message}`);
  }
  if (parts.length === 0) return `route ${failed.route}: ${failed.failure.message}`;
  return parts.length === 1 ? parts[0] : `${parts.length} routes failed: ${parts.join('; ')}`;
}

async function settleRetry(
  context: DeliveryContext,
  input: SettleInput,
  settlement: { failed: RouteFailure; nextAttemptAt: number },
  now: number,
): Promise<void> {
  const { route, failure } = settlement.failed;
  const { nextAttemptAt } = settlement;
  await recordOutcome(context, input.delivery, {
    kind: 'retry',
    now,
    nextAttemptAt,
    error: `route ${route}: ${failure.message}`,
    code: failure.code,
  });
  const fields = {
    route,
    code: failure.code,
    error: failure.message,
    nextAttemptAt: new Date(nextAttemptAt).toISOString(),
    sentRoutes: input.report.sentRoutes,
  };
  if (failure.configProblem) input.log.error(fields, 'send failed: configuration problem (will retry)');
  else input.log.warn(fields, 'send failed; will retry');
  context.onOutcome?.({ type: 'retry', delivery: input.delivery, failure, nextAttemptAt, durationMs: now - input.started });
}

/** Every due route is sent (or none was to be): the delivery is `sent`, with its first mail's Message-ID. */
async function settleDone(context: DeliveryContext, input: SettleInput, now: number): Promise<void> {
  const { delivery, plan, report, log } = input;
  const sent = plan.filter((m) => m.state === 'sent');
  if (sent.length === 0) {
    await recordOutcome(context, delivery, { kind: 'sent', now, messageId: '' });
    const reasons = Object.fromEntries(plan.map((m) => [m.route, m.reason]));
    log.info({ reasons }, 'no mail for this report: every route suppressed it or did not match');
    context.onOutcome?.({ type: 'suppressed', delivery, reasons, durationMs: now - input.started });
    return;
  }
  const messageId = sent[0].messageId ?? '';
  await recordOutcome(context, delivery, { kind: 'sent', now, messageId });
  context.onOutcome?.({
    type: 'sent',
    delivery,
    messageId,
    response: report.firstResponse,
    durationMs: now - input.started,
    routes: report.sentRoutes,
  });
}

/**
 * A mail that could not be composed: dead when the failure is permanent (a template error: the same input
 * fails the same way), otherwise tried again with the deliveries' own backoff, until RETRY_MAX_ATTEMPTS.
 */
export async function settleComposeFailure(
  context: DeliveryContext,
  input: { delivery: ClaimedDelivery; failure: FailureClass; started: number; log: Logger },
): Promise<void> {
  const { delivery, failure, log } = input;
  const now = context.clock.now();
  const next = context.policy.decide({ kind: 'not-built', failure }, delivery.attempts, now);
  if (next.next !== 'backoff') return settleDead(context, input);
  const nextAttemptAt = next.at;
  await recordOutcome(context, delivery, { kind: 'retry', now, nextAttemptAt, error: failure.message, code: failure.code });
  log.warn(
    { code: failure.code, error: failure.message, nextAttemptAt: new Date(nextAttemptAt).toISOString() },
    'cannot compose the mail now (nothing was sent); will retry',
  );
  context.onOutcome?.({ type: 'retry', delivery, failure, nextAttemptAt, durationMs: now - input.started });
}

/** Ends the delivery as dead with `failure`; a configuration problem is logged at `fatal`, an operator must act. */
export async function settleDead(
  context: DeliveryContext,
  input: { delivery: ClaimedDelivery; failure: FailureClass; started: number; log: Logger },
): Promise<void> {
  const { delivery, failure, log } = input;
  const now = context.clock.now();
  await recordOutcome(context, delivery, { kind: 'dead', now, error: failure.message, code: failure.code });
  const fields = { code: failure.code, error: failure.message };
  if (failure.configProblem) log.fatal(fields, 'delivery is dead: CONFIGURATION PROBLEM, fix it and retry the dead deliveries');
  else log.error(fields, 'delivery is dead: the failure is permanent');
  context.onOutcome?.({ type: 'dead', delivery, failure, durationMs: now - input.started });
}

/** A route that failed permanently in an earlier attempt (still `failed`): the delivery cannot be `sent`. */
function findEarlierPermanent(plan: RouteMailRecord[]): RouteFailure | undefined {
  const failed = plan.find((m) => m.state === 'failed');
  return failed && toRouteFailure(failed);
}

/** A route mail that failed for good earlier, as a failure. */
function toRouteFailure(failed: RouteMailRecord): RouteFailure {
  // Stored by this relay, so from the catalogue; a code an older version stored reads as UNKNOWN.
  return {
    route: failed.route,
    failure: {
      kind: 'permanent',
      code: parseFailureCode(failed.lastErrorCode),
      configProblem: false,
      scope: 'message',
      message: failed.lastError ?? 'failed earlier',
    },
  };
}

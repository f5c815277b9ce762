import type { SendMailOptions } from 'nodemailer';
import type { SendResult } from '../mail';
import type { Logger } from '../shared';
import type { ClaimedDelivery, RouteMailRecord } from '../store';
import { buildFailureClass, classifyFailure, classifyRenderFailure, type FailureClass } from '../notify';
import { recordOutcome, type DeliveryContext } from './delivery-context';
import type { ComposedMail } from '../compose';
import type { NextState } from './retry-policy';
import type { SendTicket } from './send-gate';

export interface SendRouteMailsInput {
  delivery: ClaimedDelivery;
  composed: ComposedMail;
  /** The recorded route plan; each mail sent now is marked `sent` in it, with its Message-ID. */
  plan: RouteMailRecord[];
  /** This delivery is the breaker's probe: it alone may send while the breaker is not closed. */
  isProbe: boolean;
  /** Its place in the send queue (send-gate.ts); acquired before the first send, released by the caller. */
  ticket: SendTicket;
  log: Logger;
}

/** The first route that failed one way, with how, and what the retry policy made of it. */
export interface RouteFailure {
  route: string;
  failure: FailureClass;
  next?: NextState;
}

/** What one attempt at sending a delivery's route mails did, for the settle step. */
export interface SendReport {
  /**
   * Why it stopped before its first send to the server: `held-back` when the ledger was full at its
   * turn (a mail sent now could not be recorded), `deferred` when the server went away while it
   * waited for its turn (it waits with the queue until `until`).
   */
  stopped?: { reason: 'held-back' } | { reason: 'deferred'; until: number };
  transient?: RouteFailure;
  permanent?: RouteFailure;
  /** Every route that failed in this attempt, in plan order (a dead delivery's error names them all). */
  failures: RouteFailure[];
  /** The server as a whole failed: the end of the queue's pause (retry-policy.ts). */
  pausedUntil?: number;
  /** Routes sent in this attempt, in order. */
  sentRoutes: string[];
  /** The SMTP answer to the first of them. */
  firstResponse: string;
}

/** One route mail's send: sent, or failed with what the retry policy decided. */
type RouteSendResult = { sent: true; response: string } | { sent: false; failure: FailureClass; next: NextState };

/**
 * The send step: sends every route mail not sent yet, in plan order; one route failing does not
 * hold back the others, except a server-wide failure (they would fail the same way). Each outcome is
 * recorded before the next send, so the permit the ticket holds covers send and record alike.
 */
export async function sendRouteMails(context: DeliveryContext, input: SendRouteMailsInput): Promise<SendReport> {
  const report: SendReport = { sentRoutes: [], firstResponse: '', failures: [] };
  let hasTurn = false;
  for (const mail of selectDueRouteMails(input.plan, input.delivery.attempts)) {
    await context.pacer.turn();
    const rendered = await renderRouteMail(input.composed, mail);
    if (!rendered.ok) {
      const { failure } = rendered;
      await recordRouteFailure(context, input.delivery, mail.route, failure);
      // A template error: permanent (classifyRenderFailure).
      const next = context.policy.decide({ kind: 'not-built', failure }, input.delivery.attempts, context.clock.now());
      if (failure.kind === 'transient') report.transient ??= { route: mail.route, failure, next };
      else report.permanent ??= { route: mail.route, failure };
      report.failures.push({ route: mail.route, failure });
      continue;
    }
    const log = input.log.child({ route: mail.route });
    log.debug({ subject: rendered.message.subject }, 'mail rendered');
    if (!hasTurn) {
      await input.ticket.acquire();
      hasTurn = true;
      // Prepared before the server failed for an older delivery: it does not try, it waits for the
      // probe like every other delivery behind it.
      if (context.policy.state !== 'closed' && !input.isProbe) {
        report.stopped = { reason: 'deferred', until: Math.max(context.policy.openUntil, context.clock.now()) };
        break;
      }
    }
    // The ledger filled up while this delivery waited: a mail sent now could not be recorded. It
    // leaves its claim to expire (recording a retry would be refused too) and is claimed again later.
    // A probe still goes: held back, it would leave the breaker probing and the queue paused for good.
    if (context.ledger.full && !input.isProbe) {
      report.stopped = { reason: 'held-back' };
      break;
    }
    const result = await sendRouteMail(context, input, mail, rendered.message, log);
    if (result.sent) {
      report.sentRoutes.push(mail.route);
      if (report.sentRoutes.length === 1) report.firstResponse = result.response;
      continue;
    }
    const { failure, next } = result;
    if (failure.kind === 'transient') report.transient ??= { route: mail.route, failure, next };
    else report.permanent ??= { route: mail.route, failure };
    report.failures.push({ route: mail.route, failure });
    // The other routes would fail the same way: they wait for the server with this delivery.
    if (next.next === 'pause' || next.next === 'held') {
      report.pausedUntil = next.until;
      break;
    }
  }
  return report;
}

/**
 * The route mails to send in this attempt. A route that failed permanently is tried again only when
 * the delivery starts over (first attempt or an operator's requeue), not on every retry of another
 * route's transient failure.
 */
function selectDueRouteMails(plan: RouteMailRecord[], attempts: number): RouteMailRecord[] {
  return plan.filter((m) => m.state === 'pending' || (m.state === 'failed' && attempts <= 1));
}

/** The mail of one route, or why there is none: its template failed, or the route is gone from ROUTES_FILE. */
async function renderRouteMail(
  composed: ComposedMail,
  mail: RouteMailRecord,
): Promise<{ ok: true; message: SendMailOptions } | { ok: false; failure: FailureClass }> {
  let message: SendMailOptions | undefined;
  try {
    if (composed.kind === 'report') {
      const group = mail.ownerGroup ?? null;
      const context = { name: group?.route ?? mail.route, mailRoute: mail.route, reminder: mail.reminder, reason: mail.reason, group };
      message = await composed.messageFor(context);
    } else if (mail.route === composed.route) message = composed.message;
  } catch (error) {
    return { ok: false, failure: classifyRenderFailure(error ?? new Error('rendering failed')) };
  }
  if (message !== undefined) return { ok: true, message };
  return {
    ok: false,
    failure: buildFailureClass('ROUTE_REMOVED', `route ${mail.route} is no longer in ROUTES_FILE; restore it and retry the delivery`),
  };
}

/** Sends one route mail and records its outcome; the retry policy hears how the server answered. */
async function sendRouteMail(
  context: DeliveryContext,
  input: SendRouteMailsInput,
  mail: RouteMailRecord,
  message: SendMailOptions,
  log: Logger,
): Promise<RouteSendResult> {
  const { policy } = context;
  let result: SendResult;
  try {
    result = await context.transport.send(message);
  } catch (error) {
    const failure = classifyFailure(error);
    await recordRouteFailure(context, input.delivery, mail.route, failure);
    return decideAfterFailure(context, input, failure);
  }
  if (input.isProbe && policy.state !== 'closed') context.logger.info('the SMTP server answers again: resuming deliveries, oldest first');
  policy.decide({ kind: 'sent' }, input.delivery.attempts, context.clock.now());
  const messageId = String(message.messageId ?? result.messageId);
  await recordOutcome(context, input.delivery, {
    kind: 'route-sent',
    route: mail.route,
    now: context.clock.now(),
    messageId,
    response: result.response,
  });
  mail.state = 'sent';
  mail.messageId = messageId;
  context.onRouteSent?.({ delivery: input.delivery, route: mail.route, messageId, response: result.response });
  log.info(
    { messageId: message.messageId, response: result.response, ...(result.path ? { path: result.path } : {}) },
    result.path ? `mail written to ${result.path}` : 'mail sent',
  );
  return { sent: true, response: result.response };
}

/** What the retry policy makes of a failed send; a pause it starts (or the probe's renews) is logged once. */
function decideAfterFailure(context: DeliveryContext, input: SendRouteMailsInput, failure: FailureClass): RouteSendResult {
  const { policy } = context;
  const wasClosed = policy.state === 'closed';
  const outcome = { kind: 'failed' as const, failure, deliveryId: input.delivery.id, isProbe: input.isProbe };
  const next = policy.decide(outcome, input.delivery.attempts, context.clock.now());
  if ((next.next === 'pause' || next.next === 'held') && (wasClosed || input.isProbe))
    context.logger.warn(
      { code: failure.code, error: policy.lastError?.message, pausedUntil: new Date(next.until).toISOString(), failures: policy.failures },
      failure.configProblem
        ? 'CONFIGURATION PROBLEM: no mail can be sent until it is fixed; pausing all deliveries (none is given up for it), then probing with the oldest'
        : 'the SMTP server is unavailable: pausing all deliveries, then probing with the oldest',
    );
  return { sent: false, failure, next };
}

/** Records that one route's mail failed (a render failure is permanent: classifyRenderFailure). */
function recordRouteFailure(
  context: DeliveryContext,
  delivery: ClaimedDelivery,
  route: string,
  failure: FailureClass,
): Promise<'recorded' | 'held'> {
  return recordOutcome(context, delivery, {
    kind: 'route-failed',
    route,
    now: context.clock.now(),
    error: failure.message,
    code: failure.code,
    permanent: failure.kind === 'permanent',
  });
}

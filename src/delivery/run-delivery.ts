import type { ClaimedDelivery } from '../store';
import { composeDelivery } from './compose-delivery';
import type { DeliveryContext } from './delivery-context';
import { loadRoutePlan } from './load-route-plan';
import type { SendTicket } from './send-gate';
import { sendRouteMails } from './send-route-mails';
import { settleComposeFailure, settleDelivery } from './settle-delivery';

/**
 * One claimed delivery through compose → plan → send → settle. `ticket` is its place in the send
 * queue, taken in claim order; it is released once every route's outcome is recorded (or held by the
 * ledger, which records it before anything else of this delivery), so the next delivery may talk to
 * the server. Never rejects.
 */
export async function runDelivery(context: DeliveryContext, delivery: ClaimedDelivery, ticket: SendTicket): Promise<void> {
  const started = context.clock.now();
  const log = context.logger.child({ deliveryId: delivery.id, reportId: delivery.reportId, attempt: delivery.attempts });
  try {
    await context.pacer.turn();
    const composed = await composeDelivery(context, delivery, log);
    if (!composed.ok) {
      await settleComposeFailure(context, { delivery, failure: composed.failure, started, log });
      return;
    }
    const isProbe = context.probe.take(delivery.id);
    const plan = await loadRoutePlan(context, delivery, composed.composed, log);
    const report = await sendRouteMails(context, { delivery, composed: composed.composed, plan, isProbe, ticket, log });
    ticket.release();
    await settleDelivery(context, { delivery, plan, report, started, log });
  } catch (error) {
    // Only the steps before any send can throw (outcomes go to the ledger, which keeps them): nothing
    // was mailed, the lease expires and the delivery is tried again.
    log.error({ err: error }, 'cannot prepare the delivery (nothing was sent); it will be tried again when its lease expires');
  } finally {
    // While the breaker probes, this delivery is the only one in flight (create-worker claims the probe
    // only once all others settled): still probing here means it never reached the server.
    if (context.policy.state === 'probing') context.policy.probeEnded(context.clock.now());
  }
}

import type { ClaimedDelivery } from '../store';
import type { DeliveryContext } from './delivery-context';

/** What a claim took: the deliveries to send now, and whether the claim was full (more may be due). */
export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  full: boolean;
}

/**
 * How many deliveries may be claimed now, given `free` slots of the worker's own and `inFlight` deliveries
 * still running. At the cap of unrecorded outcomes none: a mail sent now could not be recorded either.
 * While the breaker is not closed, none until every delivery in flight has settled: the one that failed
 * and those put back behind it must be back in the queue before the probe is claimed, or a newer queued
 * delivery would probe first and the queue would leave its order. Otherwise the breaker decides (all
 * free slots, one probe, or none while the server is paused).
 */
export function computeClaimCapacity(
  context: Pick<DeliveryContext, 'ledger' | 'policy' | 'clock'>,
  free: number,
  inFlight: number,
): number {
  if (context.ledger.full) return 0;
  if (context.policy.state !== 'closed' && inFlight > 0) return 0;
  return context.policy.capacity(context.clock.now(), free);
}

/**
 * The claim step: takes up to `limit` due deliveries, oldest first, durably (state `sending`, with a
 * lease) before any is sent. Resolves undefined when the store refused (logged; the next tick tries
 * again). A delivery whose outcome the ledger still holds is not sent again; a claim made while the
 * breaker was open is its probe (the first delivery claimed).
 */
export async function claimDeliveries(
  context: DeliveryContext,
  limit: number,
  inFlight: ReadonlySet<number> = new Set(),
): Promise<ClaimResult | undefined> {
  // Whether this claim is the breaker's probe is decided now, not after the await: a send that fails
  // meanwhile opens the breaker, and a claim made while it was closed must not become a probe (it would
  // talk to the failing server ahead of the older delivery that should probe).
  const asProbe = context.policy.state === 'open';
  let claimed: ClaimedDelivery[];
  try {
    claimed = await context.store.claimDue({ now: context.clock.now(), limit, owner: context.owner, leaseMs: context.leaseMs });
  } catch (error) {
    context.logger.error({ err: error }, 'cannot claim deliveries from the outbox; will try again');
    return undefined;
  }
  // Not started again, each said once: a delivery already running here (its lease ran out while it waited
  // for a send slot; the run in flight settles it), and one whose outcome the ledger holds (claimed again
  // after the store was away too long to extend its lease: it was sent; the held outcome settles it).
  const running = claimed.filter((d) => inFlight.has(d.id)).map((d) => d.id);
  const held = claimed.filter((d) => !inFlight.has(d.id) && context.ledger.holds(d.id)).map((d) => d.id);
  if (running.length > 0)
    context.logger.warn({ deliveryIds: running }, 'claimed again while still in flight here (its lease ran out): not starting it twice');
  if (held.length > 0)
    context.logger.warn({ deliveryIds: held }, 'not sending again: the outcome of these deliveries is held until the store records it');
  const deliveries = claimed.filter((d) => !inFlight.has(d.id) && !context.ledger.holds(d.id));
  if (asProbe) {
    context.policy.claimed(deliveries.length);
    if (deliveries.length > 0) context.probe.offer(deliveries[0].id);
  }
  return { deliveries, full: claimed.length === limit };
}

import type { ClaimedDelivery } from '../store';
import type { DeliveryContext } from './delivery-context';

/** What a claim took: the deliveries to send now, and whether the claim was full (more may be due). */
export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  full: boolean;
}

/**
 * How many deliveries may be claimed now, given `free` slots of the worker's own. At the cap of
 * unrecorded outcomes none: a mail sent now could not be recorded either. Otherwise the circuit
 * breaker decides (all free slots, one probe, or none while the server is paused).
 */
export function computeClaimCapacity(context: Pick<DeliveryContext, 'ledger' | 'breaker' | 'clock'>, free: number): number {
  return context.ledger.full ? 0 : context.breaker.capacity(context.clock.now(), free);
}

/**
 * The claim step: takes up to `limit` due deliveries, oldest first, durably (state `sending`, with a
 * lease) before any is sent. Resolves undefined when the store refused (logged; the next tick tries
 * again). A delivery whose outcome the ledger still holds is not sent again; while the breaker
 * probes, the first delivery claimed is its probe.
 */
export async function claimDeliveries(context: DeliveryContext, limit: number): Promise<ClaimResult | undefined> {
  let claimed: ClaimedDelivery[];
  try {
    claimed = await context.store.claimDue({ now: context.clock.now(), limit, owner: context.owner, leaseMs: context.leaseMs });
  } catch (error) {
    context.logger.error({ err: error }, 'cannot claim deliveries from the outbox; will try again');
    return undefined;
  }
  const deliveries = claimed.filter((d) => !context.ledger.holds(d.id));
  // Claimed again after its lease ran out while its outcome waits (the store was away too long to
  // extend it): it was sent; the held outcome settles it.
  if (deliveries.length < claimed.length) {
    const held = claimed.filter((d) => context.ledger.holds(d.id)).map((d) => d.id);
    context.logger.warn({ deliveryIds: held }, 'not sending again: the outcome of these deliveries is held until the store records it');
  }
  context.breaker.claimed(deliveries.length);
  if (context.breaker.state === 'probing' && deliveries.length > 0) context.probe.offer(deliveries[0]!.id);
  return { deliveries, full: claimed.length === limit };
}

/**
 * Which claimed delivery is the circuit breaker's probe. Set when a claim is made while the
 * breaker is probing; the probe itself takes it once composed, so it alone may talk to a server
 * that has been failing (every other delivery waits for its answer, retry-policy.ts).
 */
export interface ProbeSlot {
  /** `deliveryId` was claimed as the probe (replaces an earlier one not taken yet). */
  offer(deliveryId: number): void;
  /** True, once, for the delivery offered as the probe; it is then no longer the probe. */
  take(deliveryId: number): boolean;
}

/** An empty probe slot. */
export function createProbeSlot(): ProbeSlot {
  let probeId: number | undefined;
  return {
    offer(deliveryId) {
      probeId = deliveryId;
    },
    take(deliveryId) {
      if (probeId !== deliveryId) return false;
      probeId = undefined;
      return true;
    },
  };
}

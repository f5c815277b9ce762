import type { Logger } from '../shared';
import { StorageUnavailableError, type ClaimedDelivery } from '../store';
import { classifyRenderFailure, type FailureClass } from '../notify';
import type { DeliveryContext } from './delivery-context';
import type { ComposedMail } from '../compose';

/** A delivery composed, or why it cannot be (a failure that ends it: dead). */
export type ComposeResult = { ok: true; composed: ComposedMail } | { ok: false; failure: FailureClass };

/**
 * The compose step: the stored bytes become the report (or notice) every route's mail is rendered
 * from. A failure is classified here, where it is caught; rendering is deterministic, so it is
 * permanent (the same input fails the same way). The one exception is the store: composing reads the
 * series' history (trend, chart) and records the report, and a store that is away says nothing about
 * the report. That error goes up to the run, which leaves the claim to come back after its lease.
 */
export async function composeDelivery(
  context: Pick<DeliveryContext, 'compose'>,
  delivery: ClaimedDelivery,
  log: Logger,
): Promise<ComposeResult> {
  try {
    return { ok: true, composed: await context.compose(delivery, log) };
  } catch (error) {
    if (error instanceof StorageUnavailableError) throw error;
    return { ok: false, failure: classifyRenderFailure(error) };
  }
}

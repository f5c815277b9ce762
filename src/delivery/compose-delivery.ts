import type { Logger } from '../shared';
import type { ClaimedDelivery } from '../store';
import { classifyRenderFailure, type FailureClass } from './classify-failure';
import type { DeliveryContext } from './delivery-context';
import type { ComposedMail } from '../compose';

/** A delivery composed, or why it cannot be (a failure that ends it: dead). */
export type ComposeResult = { ok: true; composed: ComposedMail } | { ok: false; failure: FailureClass };

/**
 * The compose step: the stored bytes become the report (or notice) every route's mail is rendered
 * from. A failure is classified here, where it is caught; rendering is deterministic, so it is
 * permanent (the same input fails the same way).
 */
export async function composeDelivery(
  context: Pick<DeliveryContext, 'compose'>,
  delivery: ClaimedDelivery,
  log: Logger,
): Promise<ComposeResult> {
  try {
    return { ok: true, composed: await context.compose(delivery, log) };
  } catch (error) {
    return { ok: false, failure: classifyRenderFailure(error) };
  }
}

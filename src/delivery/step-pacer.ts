/**
 * Hands out the worker's CPU-heavy steps (composing a delivery, rendering and building a route's mail)
 * one at a time, oldest request first: one per turn of the event loop, and one per
 * {@link ACK_FIRST_STEP_GAP_MS} while webhooks wait for their answer.
 */
export interface StepPacer {
  /** Resolves at this step's turn: in a later turn of the event loop than the step granted before it. */
  turn(): Promise<void>;
  /** Steps waiting for their turn. */
  readonly waiting: number;
}

export interface StepPacerOptions {
  /** True while webhooks are being received and answered (relay.ts counts them): mailing yields to them. */
  acksWaiting?: () => boolean;
  /** The gap between two steps while acks wait (default {@link ACK_FIRST_STEP_GAP_MS}). */
  gapMs?: number;
}

/**
 * While webhooks wait, the worker runs one step per this many milliseconds: a step is 1–2 ms of the
 * event loop, so mailing keeps going (a flood of webhooks never stops it) at a small share of a busy
 * loop, and the acknowledgements get the rest (BENCHMARKS.md "ack path first").
 */
export const ACK_FIRST_STEP_GAP_MS = 25;

/**
 * Keep the ack path first: NetBox ≤ 4.6 holds one of its workers until the relay answers,
 * and the relay's acknowledgements share the event loop with the worker. Steps of the deliveries in
 * flight resume together when a group commit or an SMTP answer resolves their promises, and promise
 * continuations all run before the loop turns again: a commit that resolved twenty deliveries' records
 * ran twenty composes (1–2 ms each) back to back while the webhooks that had arrived meanwhile waited.
 * Granting each step from a `setImmediate` bounds the mailing work between two polls for I/O to one
 * step: Node runs an immediate queued during the check phase in the next turn, after that turn's
 * poll has read the waiting requests. While webhooks are in flight the grants are spaced further
 * (a timer), so a sustained burst of webhooks is answered at nearly the rate the relay answers with
 * its worker idle, and the mails catch up once it ends.
 */
export function createStepPacer(options: StepPacerOptions = {}): StepPacer {
  const gapMs = options.gapMs ?? ACK_FIRST_STEP_GAP_MS;
  const queue: (() => void)[] = [];
  let scheduled = false;
  const grant = () => {
    scheduled = false;
    queue.shift()?.();
    if (queue.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (options.acksWaiting?.()) setTimeout(grant, gapMs);
    else setImmediate(grant);
  };
  return {
    turn: () =>
      new Promise<void>((resolve) => {
        queue.push(resolve);
        schedule();
      }),
    get waiting() {
      return queue.length;
    },
  };
}

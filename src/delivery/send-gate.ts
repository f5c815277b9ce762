/**
 * Who may talk to the SMTP server now. The worker prepares more deliveries than it sends at once
 * (composing and recording route decisions take store round trips and a render, not the server),
 * and each of them takes a ticket in claim order. A ticket becomes a permit only when one is free
 * and at most `permits − 1` older tickets are still waiting, so sends start in queue order exactly
 * as they did when only `permits` deliveries were claimed: strictly oldest first with one permit.
 * A permit is held from the first send of a delivery until its last route's outcome is recorded,
 * so no more than `permits` deliveries are ever between "the server accepted" and "recorded sent"
 * (the duplicate bound after a crash).
 */
export interface SendGate {
  /** A place in the queue; take them in claim order. */
  ticket(): SendTicket;
  /** Tickets not yet released or cancelled. */
  readonly waiting: number;
}

export interface SendTicket {
  /** Resolves once this delivery may send. */
  acquire(): Promise<void>;
  /** After the last send's outcome was recorded; gives the permit to the next ticket. */
  release(): void;
  /** Gives up the place without sending (nothing to send, or the delivery failed before). Idempotent. */
  cancel(): void;
}

export function createSendGate(permits: number): SendGate {
  let free = Math.max(1, permits);
  /** Tickets without a permit yet, oldest first; `grant` is set once the delivery asks for one. */
  const queue: { grant?: () => void }[] = [];

  const pump = () => {
    // Only the `free` oldest waiting tickets are eligible: a younger one never overtakes them.
    for (let i = 0; i < Math.min(free, queue.length);) {
      const entry = queue[i];
      if (!entry.grant) {
        i += 1;
        continue;
      }
      queue.splice(i, 1);
      free -= 1;
      entry.grant();
      i = 0;
    }
  };

  return {
    get waiting() {
      return queue.length;
    },
    ticket() {
      const entry: { grant?: () => void } = {};
      queue.push(entry);
      let state: 'queued' | 'holding' | 'done' = 'queued';
      // Releasing a permit and giving up a place are one act: afterwards the ticket holds nothing.
      const finish = () => {
        if (state === 'holding') free += 1;
        else if (state === 'queued') queue.splice(queue.indexOf(entry), 1);
        state = 'done';
        pump();
      };
      return {
        acquire() {
          if (state !== 'queued') return Promise.resolve();
          return new Promise<void>((resolve) => {
            entry.grant = () => {
              state = 'holding';
              resolve();
            };
            pump();
          });
        },
        release: finish,
        cancel: finish,
      };
    },
  };
}

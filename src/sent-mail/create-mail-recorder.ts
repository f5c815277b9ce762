import type { ComposedMail, DeliveryComposer } from '../compose';
import type { RouteSentEvent, WorkerOutcome } from '../delivery';
import type { OutgoingMail } from '../mail';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';

export interface MailRecorder {
  /** Wraps a composer: each finished mail it gives is kept until its route's send is recorded. */
  wrap(compose: DeliveryComposer): DeliveryComposer;
  /** After one route's mail was sent and recorded: keeps its bytes in the store. */
  recordRouteSent(event: RouteSentEvent): void;
  /** After the delivery's outcome: forgets what this attempt built (a failed route's mail is not kept). */
  record(outcome: WorkerOutcome): void;
}

/**
 * Keeps the exact mail sent for each route of each delivery, for the dashboard and the admin API
 * ("what did each team receive?": a report mailed to two routes keeps both). Composing
 * builds the MIME bytes once; the worker sends those bytes, and each route's send, once recorded,
 * stores them with the SMTP answer. Storing happens after the send is
 * recorded as done: a failure to keep the copy is logged, never turned into a second mail.
 */
export function createMailRecorder(options: { store: Pick<Store, 'saveSentMessage'>; logger: Logger; clock: Clock }): MailRecorder {
  // Normally bounded by the sends in flight (every claimed delivery ends in one outcome); the cap
  // guards against a path that composes without reporting an outcome (a lost lease, say).
  // Per delivery, the mail of each route (ROUTES_FILE) built in this attempt.
  const pending = new Map<number, Map<string, OutgoingMail>>();
  const MAX_PENDING = 1_000;
  const keep = (deliveryId: number, route: string, mail: OutgoingMail): OutgoingMail => {
    let routes = pending.get(deliveryId);
    if (!routes) {
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
      pending.set(deliveryId, (routes = new Map<string, OutgoingMail>()));
    }
    routes.set(route, mail);
    return mail;
  };
  return {
    wrap(compose) {
      return async (delivery, log): Promise<ComposedMail> => {
        const composed = await compose(delivery, log);
        if (composed.kind === 'notice') return { ...composed, message: keep(delivery.id, composed.route, composed.message) };
        return {
          ...composed,
          async messageFor(route) {
            const message = await composed.messageFor(route);
            // Kept under the planned mail's name, the one its sent event names (an owner group's `<route>~<group>`).
            return message && keep(delivery.id, route.mailRoute ?? route.name, message);
          },
        };
      };
    },
    recordRouteSent(event) {
      const kept = pending.get(event.delivery.id)?.get(event.route);
      if (!kept) return;
      void options.store
        .saveSentMessage(event.delivery.id, {
          route: event.route,
          messageId: event.messageId,
          raw: kept.raw,
          envelopeFrom: kept.envelope.from,
          envelopeTo: kept.envelope.to,
          subject: kept.subject,
          text: kept.text,
          html: kept.html,
          response: event.response,
          sentAt: options.clock.now(),
        })
        .catch((error: unknown) =>
          options.logger.warn(
            { err: error, deliveryId: event.delivery.id, route: event.route },
            'the mail was sent, but its copy for the dashboard could not be stored',
          ),
        );
    },
    record(outcome) {
      pending.delete(outcome.delivery.id);
    },
  };
}

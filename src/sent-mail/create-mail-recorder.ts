import type { SendMailOptions } from 'nodemailer';
import type { ComposedMail, DeliveryComposer } from '../compose';
import type { WorkerOutcome } from '../delivery';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import { buildRawMessage } from './build-raw-message';

interface Pending {
  raw: Buffer;
  envelope: { from: string; to: string[] };
  subject: string;
  text: string | null;
  html: string | null;
}

export interface MailRecorder {
  /** Wraps a composer: the message is built to bytes once and sent as those bytes. */
  wrap(compose: DeliveryComposer): DeliveryComposer;
  /** After a send: keeps the bytes of a sent mail in the store; forgets a failed one. */
  record(outcome: WorkerOutcome): void;
}

/**
 * Keeps the exact mail sent for each delivery, for the dashboard ("what did the team receive?").
 * Composing builds the MIME bytes once; the worker then sends those bytes (`raw` with its envelope),
 * and the `sent` outcome stores them with the SMTP answer. Storing happens after the send is
 * recorded as done: a failure to keep the copy is logged, never turned into a second mail.
 */
export function createMailRecorder(options: { store: Pick<Store, 'saveSentMessage'>; logger: Logger; clock: Clock }): MailRecorder {
  // Normally bounded by the sends in flight (every claimed delivery ends in one outcome); the cap
  // guards against a path that composes without reporting an outcome (a lost lease, say).
  // Per delivery, the mail of each route (ROUTES_FILE) built in this attempt.
  const pending = new Map<number, Map<string, Pending>>();
  const MAX_PENDING = 1_000;
  const keep = async (deliveryId: number, route: string, message: SendMailOptions): Promise<SendMailOptions> => {
    const { raw, envelope } = await buildRawMessage(message);
    let routes = pending.get(deliveryId);
    if (!routes) {
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
      pending.set(deliveryId, (routes = new Map<string, Pending>()));
    }
    routes.set(route, {
      raw,
      envelope,
      subject: String(message.subject ?? ''),
      text: typeof message.text === 'string' ? message.text : null,
      html: typeof message.html === 'string' ? message.html : null,
    });
    return { raw, envelope, messageId: message.messageId, subject: message.subject };
  };
  return {
    wrap(compose) {
      return async (delivery, log): Promise<ComposedMail> => {
        const composed = await compose(delivery, log);
        if (composed.kind === 'notice') return { ...composed, message: await keep(delivery.id, composed.route, composed.message) };
        return {
          ...composed,
          async messageFor(route) {
            const message = await composed.messageFor(route);
            return message && keep(delivery.id, route.name, message);
          },
        };
      };
    },
    record(outcome) {
      const routes = pending.get(outcome.delivery.id);
      pending.delete(outcome.delivery.id);
      // One copy per delivery (the dashboard's model): the first route mail sent in this attempt.
      const kept = outcome.type === 'sent' && outcome.routes.length > 0 ? routes?.get(outcome.routes[0]) : undefined;
      if (outcome.type !== 'sent' || !kept) return;
      void options.store
        .saveSentMessage(outcome.delivery.id, {
          raw: kept.raw,
          envelopeFrom: kept.envelope.from,
          envelopeTo: kept.envelope.to,
          subject: kept.subject,
          text: kept.text,
          html: kept.html,
          response: outcome.response,
          sentAt: options.clock.now(),
        })
        .catch((error: unknown) =>
          options.logger.warn(
            { err: error, deliveryId: outcome.delivery.id },
            'the mail was sent, but its copy for the dashboard could not be stored',
          ),
        );
    },
  };
}

import type { ValuesCell } from './statement';
import type { SentMessage } from './types';

/** A `sent_messages` row as both engines read it. */
export interface SentMessageRow {
  route: string;
  message_id: string | null;
  raw: Buffer;
  envelope_from: string;
  envelope_to: string;
  subject: string;
  text_part: string | null;
  html_part: string | null;
  response: string;
  sent_at: number;
}

/** The parameters of a `sent_messages` row: the message with its recipients as JSON text. */
export type SentMessageParams = Omit<SentMessage, 'envelopeTo'> & { deliveryId: number; envelopeTo: string };

/** The cells of a {@link SentMessageParams} row, in the INSERT's column order. */
export const SENT_MESSAGE_VALUES = (
  ['deliveryId', 'route', 'messageId', 'raw', 'envelopeFrom', 'envelopeTo', 'subject', 'text', 'html', 'response', 'sentAt'] as const
).map((name): ValuesCell => [name]);

export function toSentMessageParams(deliveryId: number, m: SentMessage): SentMessageParams {
  return { ...m, deliveryId, envelopeTo: JSON.stringify(m.envelopeTo) };
}

export function fromSentMessageRow(row: SentMessageRow): SentMessage {
  return {
    route: row.route,
    messageId: row.message_id,
    raw: Buffer.from(row.raw),
    envelopeFrom: row.envelope_from,
    envelopeTo: JSON.parse(row.envelope_to) as string[],
    subject: row.subject,
    text: row.text_part,
    html: row.html_part,
    response: row.response,
    sentAt: Number(row.sent_at),
  };
}

export const SENT_MESSAGE_COLUMNS = 'route, message_id, raw, envelope_from, envelope_to, subject, text_part, html_part, response, sent_at';

import type { ValuesCell } from './statement';
import type { SentMessage, SentMessageCopy } from './types';

/** A `sent_messages` row as both engines read it; the parts are set only on rows kept before the raw copy alone was kept. */
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

/** The parameters of a `sent_messages` row: the copy with its recipients as JSON text. */
export type SentMessageParams = Omit<SentMessageCopy, 'envelopeTo'> & { deliveryId: number; envelopeTo: string };

/** The cells of a {@link SentMessageParams} row, in the INSERT's column order ({@link SENT_MESSAGE_WRITTEN}). */
export const SENT_MESSAGE_VALUES = (
  ['deliveryId', 'route', 'messageId', 'raw', 'envelopeFrom', 'envelopeTo', 'subject', 'response', 'sentAt'] as const
).map((name): ValuesCell => [name]);

export const SENT_MESSAGE_WRITTEN = 'route, message_id, raw, envelope_from, envelope_to, subject, response, sent_at';
export const SENT_MESSAGE_COLUMNS = 'route, message_id, raw, envelope_from, envelope_to, subject, text_part, html_part, response, sent_at';

export function toSentMessageParams(deliveryId: number, m: SentMessageCopy): SentMessageParams {
  return {
    deliveryId,
    route: m.route,
    messageId: m.messageId,
    raw: m.raw,
    envelopeFrom: m.envelopeFrom,
    envelopeTo: JSON.stringify(m.envelopeTo),
    subject: m.subject,
    response: m.response,
    sentAt: m.sentAt,
  };
}

/** The kept mail with its parts: those stored beside an older copy, else read from the raw copy. */
export async function fromSentMessageRow(row: SentMessageRow): Promise<SentMessage> {
  const raw = Buffer.from(row.raw);
  const stored = row.text_part !== null || row.html_part !== null;
  const parts = stored ? { text: row.text_part, html: row.html_part } : await readMailParts(raw);
  return {
    route: row.route,
    messageId: row.message_id,
    raw,
    envelopeFrom: row.envelope_from,
    envelopeTo: JSON.parse(row.envelope_to) as string[],
    subject: row.subject,
    ...parts,
    response: row.response,
    sentAt: Number(row.sent_at),
  };
}

/**
 * The decoded text and HTML parts of MIME bytes, as they were before encoding: `cid:` links kept (the dashboard
 * embeds the images itself) and no part made up from the other. The parser is loaded on the first kept mail shown,
 * so a relay that never shows one does not carry it.
 */
async function readMailParts(raw: Buffer): Promise<{ text: string | null; html: string | null }> {
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, {
    keepCidLinks: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  return { text: parsed.text ?? null, html: typeof parsed.html === 'string' ? parsed.html : null };
}

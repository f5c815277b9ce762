import { selectAs } from './statement';
import type { SentMessage, SentMessageCopy } from './types';

/** A `sent_messages` row as both engines read it; the parts are set only on rows kept before the raw copy alone was kept. */
export type SentMessageRow = Omit<SentMessageCopy, 'envelopeTo'> & { envelopeTo: string; textPart: string | null; htmlPart: string | null };

export const SENT_MESSAGE_WRITTEN = 'route, message_id, raw, envelope_from, envelope_to, subject, response, sent_at';
export const SENT_MESSAGE_FIELDS = selectAs(`${SENT_MESSAGE_WRITTEN}, text_part, html_part`);

/** A kept copy as its row: its recipients as JSON text. */
export function toSentMessageParams(deliveryId: number, m: SentMessageCopy) {
  return { ...m, deliveryId, envelopeTo: JSON.stringify(m.envelopeTo) };
}

/** The kept mail with its parts: those stored beside an older copy, else read from the raw copy. */
export async function fromSentMessageRow(row: SentMessageRow): Promise<SentMessage> {
  const { textPart, htmlPart, envelopeTo, ...copy } = row;
  const parts = textPart !== null || htmlPart !== null ? { text: textPart, html: htmlPart } : await readMailParts(row.raw);
  return { ...copy, envelopeTo: JSON.parse(envelopeTo) as string[], ...parts };
}

/**
 * The decoded text and HTML parts of MIME bytes, as they were before encoding: an inline image (`cid:`) as a `data:`
 * URI, as a mail client shows it, and no part made up from the other. The parser is loaded on the first kept mail shown,
 * so a relay that never shows one does not carry it.
 */
async function readMailParts(raw: Buffer): Promise<{ text: string | null; html: string | null }> {
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  return { text: parsed.text ?? null, html: typeof parsed.html === 'string' ? parsed.html : null };
}

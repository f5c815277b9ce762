import type { SendMailOptions } from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { chooseTextEncoding } from './choose-text-encoding';

export interface RawMessage {
  /** RFC 5322 bytes (CRLF line ends), without a Bcc header. */
  raw: Buffer;
  envelope: { from: string; to: string[] };
}

/**
 * Builds a message's MIME bytes once (CRLF line ends), with nodemailer's own composer (what its SMTP transport
 * would build), and the SMTP envelope (To, Cc and Bcc). Sending these bytes as `raw` means what
 * the dashboard shows is exactly what left, not a rebuild with other MIME boundaries.
 */
export async function buildRawMessage(message: SendMailOptions): Promise<RawMessage> {
  // The same bytes, without nodemailer detecting the text encoding of each value (see chooseTextEncoding).
  const textEncoding = chooseTextEncoding(message);
  const node = new MailComposer(textEncoding ? { ...message, textEncoding } : message).compile();
  const built = await new Promise<Buffer>((resolve, reject) => node.build((error, bytes) => (error ? reject(error) : resolve(bytes))));
  // SMTP puts every line end on the wire as CRLF (RFC 5321 §2.3.8; nodemailer converts as it sends):
  // converting here keeps these bytes identical to what the server receives. latin1 maps bytes 1:1.
  const raw = Buffer.from(built.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
  const envelope = node.getEnvelope();
  return { raw, envelope: { from: envelope.from || '', to: envelope.to } };
}

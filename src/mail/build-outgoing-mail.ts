import type MailComposer from 'nodemailer/lib/mail-composer';
import type { RenderedMail } from './renderer';

/** A file carried by a mail: the CSV of failing results. */
export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

/** Who a mail goes to; Bcc goes into the envelope only, never into a header. */
export interface Recipients {
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo?: string;
}

/** What a mail says and to whom: composing knows nothing of how a mail is encoded or sent. */
export interface MailInput extends Recipients, RenderedMail {
  from: string;
  /** With its angle brackets (see buildMessageId). */
  messageId: string;
  date: Date;
  /** Set as In-Reply-To and References (see buildThreadId). */
  threadId?: string;
  /** Extra headers for client-side filters (X-Compliance-*); CR and LF in their values become spaces. */
  headers?: Record<string, string>;
  attachments?: MailAttachment[];
}

export type OutgoingMail = Awaited<ReturnType<typeof buildOutgoingMail>>;

/**
 * Builds a mail's bytes once, with nodemailer's MailComposer (what its SMTP transport would build), and the SMTP
 * envelope (no Bcc header is written), marked as automatic so that auto-responders and Exchange stay quiet (RFC 3834
 * Auto-Submitted; X-Auto-Response-Suppress). The relay sends and stores exactly these bytes.
 */
export async function buildOutgoingMail(input: MailInput) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: `--help` and `check-config` never build a mail
  const MailComposerClass = require('nodemailer/lib/mail-composer') as typeof MailComposer;
  const node = new MailComposerClass({
    from: input.from,
    to: input.to,
    cc: input.cc.length ? input.cc : undefined,
    bcc: input.bcc.length ? input.bcc : undefined,
    replyTo: input.replyTo,
    subject: input.subject,
    text: input.text,
    html: input.html,
    messageId: input.messageId,
    inReplyTo: input.threadId,
    references: input.threadId ? [input.threadId] : undefined,
    date: input.date,
    headers: {
      'Auto-Submitted': 'auto-generated',
      'X-Auto-Response-Suppress': 'All',
      // A report field must not be able to add a header.
      ...Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k, String(v).replace(/[\r\n]+/g, ' ')])),
    },
    attachments: input.attachments?.length ? input.attachments : undefined,
    // The relay's parts are markup and mostly ASCII words, for which nodemailer's own detection (a count of
    // every letter of every part) picks quoted-printable anyway: saying so skips that count.
    textEncoding: 'quoted-printable',
    // Every part is given as bytes or text: nothing is read from a path or a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  }).compile();
  const built = await node.build();
  // SMTP puts every line end on the wire as CRLF (RFC 5321 §2.3.8; nodemailer converts as it sends):
  // converting here keeps these bytes identical to what the server receives. latin1 maps bytes 1:1.
  const raw = Buffer.from(built.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
  const envelope = node.getEnvelope();
  return {
    raw,
    envelope: { from: envelope.from || '', to: envelope.to },
    messageId: node.messageId(),
    subject: input.subject,
    text: input.text,
    html: input.html,
  };
}

import type MailComposer from 'nodemailer/lib/mail-composer';

/** A file carried by a mail: the CSV of failing results, a chart's PNG shown in-line by its `cid`. */
export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
  /** Set for an image the HTML shows in-line (`<img src="cid:…">`). */
  cid?: string;
}

/** What a mail says and to whom, before it is built to bytes: composing knows nothing of how a mail is encoded or sent. */
export interface MailContent {
  from: string;
  to: string[];
  cc: string[];
  /** In the envelope only: never written as a header. */
  bcc: string[];
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
  attachments: MailAttachment[];
  /** Values never carry CR or LF. */
  headers: Record<string, string>;
  /** With its angle brackets. */
  messageId: string;
  /** A thread root, set as In-Reply-To and References. */
  inReplyTo?: string;
  date: Date;
}

/** A finished mail: its bytes built once, the envelope they go to, and what the relay keeps of it. */
export interface OutgoingMail {
  raw: Buffer;
  envelope: { from: string; to: string[] };
  messageId: string;
  subject: string;
  text: string | null;
  html: string | null;
}

/**
 * Builds a mail's bytes once, with nodemailer's documented MailComposer (what its SMTP transport would
 * build), and the SMTP envelope (To, Cc and Bcc; no Bcc header is written). The notifier sends exactly
 * these bytes and the relay stores them, so what the dashboard shows is exactly what the server accepted.
 */
export async function buildOutgoingMail(content: MailContent): Promise<OutgoingMail> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: `--help` and `check-config` never build a mail
  const MailComposerClass = require('nodemailer/lib/mail-composer') as typeof MailComposer;
  const node = new MailComposerClass({
    from: content.from,
    to: content.to,
    cc: content.cc.length ? content.cc : undefined,
    bcc: content.bcc.length ? content.bcc : undefined,
    replyTo: content.replyTo,
    subject: content.subject,
    text: content.text,
    html: content.html,
    messageId: content.messageId,
    inReplyTo: content.inReplyTo,
    references: content.inReplyTo ? [content.inReplyTo] : undefined,
    date: content.date,
    headers: content.headers,
    attachments: content.attachments.length ? content.attachments : undefined,
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
    subject: content.subject,
    text: content.text,
    html: content.html,
  };
}

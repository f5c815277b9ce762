/** A file carried by a mail: the CSV of failing results, a chart's PNG shown in-line by its `cid`. */
export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
  /** Set for an image the HTML shows in-line (`<img src="cid:…">`). */
  cid?: string;
}

/**
 * What a mail says and to whom, before it is built to bytes: the relay's own message type, so that
 * composing knows nothing of how a mail is encoded or sent (buildOutgoingMail builds it once).
 */
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
  /** Extra headers (Auto-Submitted, X-Compliance-*); values never carry CR or LF. */
  headers: Record<string, string>;
  /** With its angle brackets. */
  messageId: string;
  /** A thread root, set as In-Reply-To and References. */
  inReplyTo?: string;
  date: Date;
}

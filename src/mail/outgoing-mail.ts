/**
 * A finished mail: its bytes built once (nodemailer's MailComposer), the envelope they go to, and what
 * the relay keeps of it. The notifier sends exactly `raw`; the settle stage stores exactly `raw` as the
 * sent copy, so the dashboard shows the bytes the server accepted.
 */
export interface OutgoingMail {
  raw: Buffer;
  envelope: { from: string; to: string[] };
  /** With its angle brackets, as in the Message-ID header. */
  messageId: string;
  subject: string;
  text: string | null;
  html: string | null;
}

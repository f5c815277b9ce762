import type MailComposer from 'nodemailer/lib/mail-composer';
import type { MailContent } from './mail-content';
import type { OutgoingMail } from './outgoing-mail';

/**
 * Builds a mail's bytes once, with nodemailer's documented MailComposer (what its SMTP transport
 * would build), and the SMTP envelope (To, Cc and Bcc; no Bcc header is written). The notifier sends
 * these bytes and the relay keeps them, so what the dashboard shows is exactly what left.
 */
export async function buildOutgoingMail(content: MailContent): Promise<OutgoingMail> {
  const node = new (loadMailComposer())({
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
    // every letter of every part) picks quoted-printable anyway: saying so skips that count, about a sixth
    // of a mail's CPU (npm run bench, end-to-end profile).
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

/** nodemailer's composer, loaded at the first mail built: `--help` and `check-config` never build one. */
let mailComposer: typeof MailComposer | undefined;
function loadMailComposer(): typeof MailComposer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only commands that mail load nodemailer
  mailComposer ??= require('nodemailer/lib/mail-composer') as typeof MailComposer;
  return mailComposer;
}

import { createHash } from 'node:crypto';
import type MailComposer from 'nodemailer/lib/mail-composer';
import type { RenderedMail } from './renderer';

/** A file carried by a mail: the CSV of failing results. */
export type MailAttachment = { filename: string; content: Buffer; contentType: string };

/** Who a mail goes to; Bcc goes into the envelope only, never into a header. */
export type Recipients = { to: string[]; cc: string[]; bcc: string[]; replyTo?: string };

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
 * A mail's bytes, built once by nodemailer's MailComposer and marked automatic so auto-responders stay quiet (RFC 3834),
 * and its SMTP envelope (no Bcc header is written). The relay sends and stores exactly these bytes.
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

/**
 * A stable Message-ID for a delivery, so a retried send is recognisably the same mail (RFC 5322 §3.6.4). The
 * hash of the dedup key keeps ids distinct even if a data dir is recreated and delivery ids start again.
 */
export function buildMessageId(options: {
  deliveryId: number;
  reportId: number | null;
  dedupKey: string;
  from: string;
  route?: string;
}): string {
  const hash = createHash('sha256')
    .update(`${options.dedupKey}\0${options.route ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  const route = options.route ? `.${slug(options.route)}` : '';
  // A digest (reportId null) is about no one report: `digest.` rather than a `report-0.` that reads as one.
  const subject = options.reportId === null ? 'digest' : `report-${options.reportId}`;
  return `<${subject}.d${options.deliveryId}${route}.${hash}@${domainOf(options.from)}>`;
}

/**
 * The root of a route's thread, never sent: every report of the route replies to it (RFC 5322 In-Reply-To/References),
 * which Thunderbird, Apple Mail, Outlook and mutt thread on.
 */
export function buildThreadId(options: { from: string; route: string; source?: string }): string {
  // One thread per source and route; the default source keeps the thread it had before sources existed.
  const source = options.source ? `.${slug(options.source)}` : '';
  return `<compliance-thread.${slug(options.route)}${source}@${domainOf(options.from)}>`;
}

const slug = (name: string) => name.replace(/[^A-Za-z0-9-]/g, '-');

const domainOf = (from: string): string => /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'compliance-relay.invalid';

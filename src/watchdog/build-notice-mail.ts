import { buildMessageId, buildOutgoingMail, type OutgoingMail, type Recipients } from '../mail';
import { html, type SafeHtml } from '../shared';

export interface WatchdogMailOptions {
  from: string;
  recipients: Recipients;
  timezone: string;
  deliveryId: number;
  dedupKey: string;
  date: Date;
}

/** One line of a relay notice: its text, ending with `link` when it has one (the HTML part links it). */
export interface NoticeLine {
  text: string;
  link?: string;
}

/**
 * A relay notice (the watchdog's, the catch-up's): lines built in code, as text and as HTML, marked automatic like the
 * report mails. `kind` goes into `X-Compliance-Watchdog`; the Message-ID is built from `route`, so a retry keeps it.
 */
export function buildNoticeMail(
  notice: { subject: string; lines: readonly NoticeLine[]; route: string; kind: string; source?: string },
  options: WatchdogMailOptions,
): Promise<OutgoingMail> {
  const { lines, source } = notice;
  // A named source's notices say which NetBox they are about, as its reports do.
  const subject = source ? `${source}: ${notice.subject}` : notice.subject;
  const text = `${lines.map((l) => l.text).join('\n')}\n`;
  const body = html`<!DOCTYPE html><html><body style="font-family: sans-serif; font-size: 14px; color: #222">${lines.map((l) =>
    l.text === '' ? html`<br>` : html`<p style="margin: 0 0 6px">${renderLine(l)}</p>`,
  )}</body></html>`;
  const { from, deliveryId, dedupKey } = options;
  return buildOutgoingMail({
    subject,
    text,
    html: body.value,
    ...options.recipients,
    from,
    messageId: buildMessageId({ deliveryId, reportId: 0, dedupKey, from, route: notice.route }),
    date: options.date,
    headers: { 'X-Compliance-Watchdog': notice.kind, ...(source ? { 'X-Compliance-Source': source } : {}) },
  });
}

function renderLine(line: NoticeLine): SafeHtml | string {
  if (!line.link) return line.text;
  return html`${line.text.slice(0, -line.link.length)}<a href="${line.link}">${line.link}</a>`;
}

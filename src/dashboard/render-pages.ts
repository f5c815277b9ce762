import type { Response } from 'express';
import { buildEmlFileName, findMessageId, readHeaderBlock } from '../http';
import { formatPercent, type ReportCounts } from '../report';
import { embedRawInlineImages } from '../mail';
import type { DeliveryRecord, RouteMailRecord, SentMessage, WatchdogAlert } from '../store';
import { CHART_SERIES } from './build-pass-chart';
import { html, SafeHtml } from '../shared';
import type { DeliveryContent } from './read-delivery-content';
import type { TransportHealth } from '../health';

const STYLE = `
  :root { color-scheme: light dark; --fg: #1c2833; --bg: #f4f6f7; --card: #fff; --line: #d5d8dc; --soft: #eaeded; --muted: #566573;
    --link: #1a5276; --error: #922b21; --focus: #2e86c1; --head: #1c2833; --pre: #f8f9f9; --ok-bg: #d4efdf; --ok-fg: #145a32;
    --bad-bg: #fadbd8; --bad-line: #f1948a; --bad-fg: #78281f; --warn-bg: #fdebd0; --warn-fg: #7e5109; --info-bg: #d6eaf8; --info-fg: #1b4f72; }
  @media (prefers-color-scheme: dark) {
    :root { --fg: #e5e8e8; --bg: #121619; --card: #1b2126; --line: #34404a; --soft: #2a333b; --muted: #a6b0b8; --link: #85c1e9;
      --error: #f5b7b1; --focus: #85c1e9; --head: #0b0e10; --pre: #151a1e; --ok-bg: #1e4d33; --ok-fg: #d4efdf; --bad-bg: #5b2620;
      --bad-line: #943126; --bad-fg: #fadbd8; --warn-bg: #5c4214; --warn-fg: #fdebd0; --info-bg: #1b3a55; --info-fg: #d6eaf8; }
  }
  * { box-sizing: border-box; }
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: var(--fg); background: var(--bg); }
  a { color: var(--link); } :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
  header { background: var(--head); color: #fff; padding: 10px 24px; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; }
  header a { color: #fff; text-decoration: none; font-weight: 600; }
  header form { margin-left: auto; }
  main { padding: 20px 24px; max-width: 1200px; }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 14px 18px; margin-bottom: 18px; }
  h1 { font-size: 20px; margin: 0 0 14px; } h2 { font-size: 16px; margin: 0 0 10px; } h3 { font-size: 14px; margin: 14px 0 6px; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--soft); vertical-align: top; }
  td { overflow-wrap: anywhere; }
  th { font-size: 12px; text-transform: uppercase; color: var(--muted); }
  .state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
  .state-sent { background: var(--ok-bg); color: var(--ok-fg); } .state-dead { background: var(--bad-bg); color: var(--bad-fg); }
  .state-retrying { background: var(--warn-bg); color: var(--warn-fg); } .state-queued, .state-sending { background: var(--info-bg); color: var(--info-fg); }
  .error { color: var(--error); font-size: 13px; } .muted { color: var(--muted); }
  .flag-high { display: inline-block; background: #c0392b; color: #fff; border-radius: 3px; padding: 0 6px; font-size: 12px; font-weight: 700; }
  .counts { display: flex; flex-wrap: wrap; gap: 8px; } .count { padding: 4px 10px; border: 1px solid var(--line); border-radius: 14px; text-decoration: none; }
  .count[aria-current] { background: var(--info-bg); color: var(--info-fg); border-color: var(--focus); }
  .filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; margin-bottom: 12px; }
  .filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
  .filters input, .filters select { font: inherit; padding: 4px 6px; max-width: 100%; color: var(--fg); background: var(--card); border: 1px solid var(--line); border-radius: 4px; }
  .filters .wide { flex: 1 1 180px; }
  .pager { display: flex; gap: 16px; margin-top: 12px; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  .flash { background: var(--ok-bg); border: 1px solid #7dcea0; padding: 8px 12px; border-radius: 4px; margin-bottom: 14px; }
  .flash.bad { background: var(--bad-bg); border-color: var(--bad-line); } .flash p, .flash ul { margin: 2px 0; }
  .banner { background: var(--bad-bg); border-bottom: 2px solid #c0392b; color: var(--bad-fg); padding: 10px 24px; margin: 0; }
  .smtp-paused { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; } .smtp-paused p { margin: 0; flex: 1 1 320px; overflow-wrap: anywhere; }
  button { font: inherit; padding: 4px 12px; border-radius: 4px; border: 1px solid #1b4f72; background: #2471a3; color: #fff; cursor: pointer; }
  header button { background: transparent; border-color: #aab7b8; }
  pre { white-space: pre-wrap; word-break: break-word; background: var(--pre); border: 1px solid var(--soft); padding: 10px; font-size: 12.5px; max-height: 480px; overflow: auto; }
  iframe { width: 100%; height: 640px; border: 1px solid var(--line); background: #fff; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; } dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
  input[type=password] { font: inherit; padding: 6px 8px; width: 320px; max-width: 100%; }
  svg text { fill: var(--muted); } svg .grid { stroke: var(--soft); } svg .legend text { fill: var(--fg); }
  .pass-chart-narrow { display: none; }
  @media (max-width: 640px) {
    header, main { padding-left: 10px; padding-right: 10px; } section { padding: 10px; }
    .pass-chart { display: none; } .pass-chart-narrow { display: block; }
    table.stack thead { display: none; } table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: 6px 0; }
    table.stack td { display: block; border: 0; padding: 2px 0; } table.digests td, table.digest-routes td { overflow-wrap: anywhere; }
    table.stack td[data-label]::before { content: attr(data-label) ": "; font-size: 12px; color: var(--muted); }
    dl { grid-template-columns: 1fr; } dt { margin-top: 6px; }
  }
`;

/**
 * Nothing may load from elsewhere and no script runs; inline styles are allowed (the page's and the mail's).
 * The sandboxed srcdoc iframe that shows a mail inherits it, so a mail's remote image or script cannot load or run.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The banners above every page after login, and the session's CSRF token for the header's forms. */
export interface PageContext {
  csrf?: string;
  /** The SMTP pause, times already formatted; `state` as /readyz names it. */
  smtpPause?: { state: 'paused' | 'probing' | 'held'; since: string; nextTry: string; lastError: string; code?: string };
  unrecorded?: number;
  notices?: string[];
  /** Whether mail can leave (the last send or check), and why not. */
  mail?: ReturnType<TransportHealth['status']>;
}

/** A page after login: its banners, the session's CSRF token for its forms, and times shown in MAIL_TIMEZONE. */
export type Page = PageContext & { csrf: string; formatTime: (ms: number) => string };

/** Sends `body` inside the document around every page. */
export function sendPage(res: Response, status: number, title: string, body: SafeHtml, ctx: PageContext = {}): void {
  res.status(status).type('html');
  res.send(renderLayout(title, body, ctx));
}

function renderLayout(title: string, body: SafeHtml, ctx: PageContext): string {
  const nav = ctx.csrf
    ? html`<a href="/ui">Deliveries</a><a href="/ui/waivers">Waivers</a><form method="post" action="/ui/logout"><input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit">Log out</button></form>`
    : '';
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · compliance-relay</title><style>${new SafeHtml(STYLE)}</style></head>
<body><header><span>compliance-relay</span>${nav}</header>${renderUnrecordedBanner(ctx.unrecorded)}${renderSmtpPauseBanner(ctx) || renderMailBanner(ctx.mail)}<main>${(ctx.notices ?? []).map((n) => html`<p class="flash bad notice" role="alert">${n}</p>`)}${body}</main></body></html>`
    .value;
}

function renderUnrecordedBanner(unrecorded: number | undefined): SafeHtml | '' {
  if (!unrecorded) return '';
  return html`<p class="banner" role="alert" data-unrecorded="${unrecorded}"><strong>The store refuses writes:</strong> ${unrecorded} outcome(s) of sends are not recorded yet. The relay keeps them in memory, retries, and claims no new delivery meanwhile. Free space or bring the database back: a restart before they are recorded mails them again.</p>`;
}

/** The whole queue waits for the SMTP server: since when, the next try, why, and a button to try now. */
function renderSmtpPauseBanner(ctx: PageContext): SafeHtml | '' {
  const pause = ctx.smtpPause;
  if (!pause) return '';
  const next =
    pause.state === 'probing'
      ? html`the oldest delivery is probing the server now`
      : html`next try at <time class="smtp-next-try">${pause.nextTry}</time>`;
  const button = ctx.csrf
    ? html`<form method="post" action="/ui/smtp/try-now"><input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit">Try now</button></form>`
    : '';
  if (pause.state === 'held')
    return html`<div class="banner smtp-paused" role="alert" data-smtp-state="held" data-mail-code="${pause.code ?? ''}"><p><strong>Sending is held for an operator</strong> since <time class="smtp-since">${pause.since}</time>: <code class="smtp-last-error">${pause.lastError}</code>. Nothing is given up: deliveries wait in the outbox. Fix what it names, then restart the relay or press Try now: every held report goes once, oldest first. Until then the relay tries once every few minutes, ${next}.</p>${button}</div>`;
  return html`<div class="banner smtp-paused" role="alert" data-smtp-state="${pause.state}" data-mail-code="${pause.code ?? ''}"><p><strong>SMTP paused</strong> since <time class="smtp-since">${pause.since}</time>, ${next}, last error <code class="smtp-last-error">${pause.lastError}</code>. Deliveries wait in the outbox (nothing is lost) and go oldest first once the server answers.</p>${button}</div>`;
}

/** The mail server refuses or cannot be reached: the same reason as /readyz's smtp check. */
function renderMailBanner(mail: PageContext['mail']): SafeHtml | '' {
  if (!mail || mail.ok) return '';
  return html`<p class="banner" role="alert" data-mail-code="${mail.code ?? ''}"><strong>Mail is not going out${mail.code ? html` (${mail.code})` : ''}:</strong> ${mail.message ?? 'the last check failed'}. Deliveries wait in the queue and are sent, oldest first, once the server takes them again.</p>`;
}

export function renderLogin(error: string | undefined): SafeHtml {
  return html`<section><h1>Log in</h1>
<p class="muted">Enter the relay's ADMIN_TOKEN. The browser keeps a signed session cookie, not the token.</p>
${error ? html`<p class="flash bad" role="alert">${error}</p>` : ''}
<form method="post" action="/ui/login"><p><label>Admin token<br><input type="password" name="token" autocomplete="current-password" required maxlength="1024" autofocus></label></p><p><button type="submit">Log in</button></p></form></section>`;
}

/** A page for one delivery: what it holds, what happened, and the exact mail that was sent. */
export function renderDelivery(input: {
  page: Page;
  record: DeliveryRecord;
  content: DeliveryContent;
  /** In the order they were sent. */
  sent: SentMessage[];
  reportLink?: string;
  routes?: RouteMailRecord[];
  /** Several NetBox sources: the page names the delivery's. */
  named?: boolean;
}): SafeHtml {
  const { page, record: d } = input;
  const t = (ms: number | null) => (ms === null ? '—' : page.formatTime(ms));
  const summary = html`<section><h1>Delivery #${d.id} ${stateBadge(d.state)}</h1><dl>
<dt>What</dt><dd>${describeContent(input.content)}${input.reportLink ? html` · <a href="${input.reportLink}" rel="noreferrer">open in NetBox</a>` : ''}</dd>
${input.named ? html`<dt>NetBox source</dt><dd>${d.source}</dd>` : ''}<dt>Received</dt><dd>${t(d.receivedAt)} ${d.receivedVia === 'catch-up' ? 'fetched from NetBox by the catch-up: its webhook never arrived' : `from ${d.sender}`}</dd>
<dt>Attempts</dt><dd>${d.attempts}</dd>
${d.nextAttemptAt !== null && d.state !== 'sent' ? html`<dt>Next attempt</dt><dd>${t(d.nextAttemptAt)}</dd>` : ''}
${d.sentAt !== null ? html`<dt>Sent</dt><dd>${t(d.sentAt)}</dd>` : ''}
${d.lastError ? html`<dt>Last error</dt><dd class="error">${d.lastErrorCode ?? ''} ${d.lastError}</dd>` : ''}
${d.messageId ? html`<dt>Message-ID</dt><dd><code>${d.messageId}</code></dd>` : ''}
</dl>${d.state === 'dead' ? html`<form method="post" action="/ui/deliveries/${d.id}/retry"><input type="hidden" name="csrf" value="${page.csrf}"><p><button type="submit">Retry</button></p></form>` : ''}</section>`;

  const counts =
    input.content.kind === 'report'
      ? renderCounts(input.content.counts)
      : input.content.kind === 'watchdog'
        ? renderAlert(input.content.alert, page.formatTime)
        : '';

  const mail = input.sent.length
    ? input.sent.map((m) => renderSentMail(d.id, m, page.formatTime))
    : html`<section><h2>Mail</h2><p class="muted">${d.state === 'sent' ? 'This delivery was sent before the relay kept copies of sent mail.' : 'Not sent yet.'}</p></section>`;
  const routes = input.routes?.length
    ? html`<section><h2>Routes</h2><table><thead><tr><th>Route</th><th>State</th><th>Why</th><th>Mail</th></tr></thead><tbody>${input.routes.map(
        (r) =>
          html`<tr><td>${r.route}${r.ownerGroup ? html`<br><span class="muted">to ${r.ownerGroup.to.join(', ')}</span>` : ''}</td><td>${r.state}${r.reminder ? ' (reminder)' : ''}</td><td>${r.reason}${r.ownerGroup ? html`<br><span class="muted">${describeGroupDevices(r.ownerGroup)}${r.ownerGroup.note ? ` — ${r.ownerGroup.note}` : ''}</span>` : ''}</td><td>${r.messageId ? html`<code>${r.messageId}</code>` : ''}${r.lastError ? html`<span class="error">${r.lastErrorCode ?? ''} ${r.lastError}</span>` : ''}</td></tr>`,
      )}</tbody></table></section>`
    : '';
  return html`<p><a href="/ui">← All deliveries</a></p>${summary}${routes}${counts}${mail}`;
}

function renderCounts(counts: ReportCounts): SafeHtml {
  const rows = CHART_SERIES.map(({ key, name }) => {
    const { passed: p, count: c } = counts[key];
    return html`<tr><td>${name}</td><td>${c === 0 ? '—' : `${p}/${c}`}</td><td>${formatPercent(p, c)}</td></tr>`;
  });
  return html`<section><h2>Report counts</h2><table><thead><tr><th>Severity</th><th>Passed</th><th>Pass rate</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** One route's mail as it was sent: where it went, its Message-ID, the .eml, headers, HTML and text parts. */
function renderSentMail(deliveryId: number, m: SentMessage, formatTime: (ms: number) => string): SafeHtml {
  const name = m.route === '' ? "route not recorded (kept before each route's mail was kept)" : m.route;
  const messageId = findMessageId(m);
  const headers = readHeaderBlock(m.raw);
  // The verdict the mail was sent with (decided once by the trend); notices have none.
  const verdict = /^X-Compliance-Verdict:[ \t]*([a-z]+)/im.exec(headers)?.[1];
  return html`<section class="route-mail" data-route="${m.route}"><h2>Mail of route <q>${name}</q></h2><dl><dt>Route</dt><dd>${name}</dd><dt>Envelope from</dt><dd>${m.envelopeFrom}</dd><dt>Envelope to</dt><dd class="mail-recipients">${m.envelopeTo.join(', ')}</dd><dt>Subject</dt><dd class="mail-subject">${m.subject}</dd>${verdict ? html`<dt>Verdict</dt><dd class="mail-verdict">${verdict}</dd>` : ''}${messageId ? html`<dt>Message-ID</dt><dd><code class="mail-message-id">${messageId}</code></dd>` : ''}<dt>Server answer</dt><dd>${m.response}</dd><dt>Sent</dt><dd>${formatTime(m.sentAt)}</dd></dl>
<p><a class="mail-eml" href="/ui/deliveries/${deliveryId}/message.eml?route=${encodeURIComponent(m.route)}" download="${buildEmlFileName(deliveryId, m.route)}">Download the message (.eml)</a></p>
<h3>Headers</h3><pre class="mail-headers">${headers}</pre>
${m.html !== null ? html`<h3>HTML part</h3><iframe title="The HTML part of the mail of route ${name}" sandbox="" referrerpolicy="no-referrer" srcdoc="${SRCDOC_CSP}${embedRawInlineImages(m.html, m.raw)}"></iframe>` : ''}
${m.text !== null ? html`<h3>Text part</h3><pre class="mail-text">${m.text}</pre>` : ''}</section>`;
}

function renderAlert(alert: WatchdogAlert, formatTime: (ms: number) => string): SafeHtml {
  return html`<section><h2>Watchdog</h2><dl><dt>Kind</dt><dd>${alert.kind}</dd><dt>Silent since</dt><dd>${formatTime(alert.silentSince)}</dd>${alert.resumedAt ? html`<dt>Resumed</dt><dd>${formatTime(alert.resumedAt)}</dd>` : ''}</dl></section>`;
}

/** Before the mail in its srcdoc: its own CSP, a second fence in case a browser does not apply the page's to srcdoc. */
const SRCDOC_CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`;

/** "devices: sw1, sw2", with the group's fixed devices after them, or "the whole report". */
function describeGroupDevices(group: { devices: string[]; fixedDevices?: string[] }): string {
  const fixed = group.fixedDevices?.length ? `fixed, failing nothing now: ${group.fixedDevices.join(', ')}` : '';
  const failing = group.devices.length ? `devices: ${group.devices.join(', ')}` : '';
  return [failing, fixed].filter((part) => part !== '').join('; ') || 'the whole report';
}

export function stateBadge(state: string): SafeHtml {
  return html`<span class="state state-${state}">${state}</span>`;
}

export function describeContent(content: DeliveryContent): SafeHtml {
  if (content.kind === 'report') {
    const { passed, count } = content.counts.overall;
    return html`Report ${content.report.id}: ${passed}/${count} passed (${formatPercent(passed, count)})`;
  }
  if (content.kind === 'watchdog')
    return html`Watchdog: ${content.alert.kind === 'overdue' ? 'no report received' : 'reports arriving again'}`;
  if (content.kind === 'missed') {
    const { notice } = content;
    return html`Catch-up notice: ${notice.skipped.length} missed report${notice.skipped.length === 1 ? '' : 's'} not mailed, ${notice.deleted.length} gone from NetBox`;
  }
  if (content.kind === 'digest') {
    const { job } = content;
    return html`Digest ${job.route}: ${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}${job.late ? ' (late)' : ''}`;
  }
  return html`<span class="muted">${content.reason}</span>`;
}

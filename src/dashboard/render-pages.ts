import { formatPercent } from '../report';
import type { DeliveryRecord, RouteMailRecord, SentMessage } from '../store';
import type { WatchdogAlert } from '../watchdog';
import { html, SafeHtml } from './html';
import type { DeliveryContent } from './read-delivery-content';

const STYLE = `
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1c2833; background: #f4f6f7; }
  header { background: #1c2833; color: #fff; padding: 10px 24px; display: flex; align-items: center; gap: 24px; }
  header a { color: #fff; text-decoration: none; font-weight: 600; }
  header form { margin-left: auto; }
  main { padding: 20px 24px; max-width: 1200px; }
  section { background: #fff; border: 1px solid #d5d8dc; border-radius: 6px; padding: 14px 18px; margin-bottom: 18px; }
  h1 { font-size: 20px; margin: 0 0 14px; } h2 { font-size: 16px; margin: 0 0 10px; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #eaeded; vertical-align: top; }
  th { font-size: 12px; text-transform: uppercase; color: #566573; }
  .state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
  .state-sent { background: #d4efdf; color: #145a32; } .state-dead { background: #f5b7b1; color: #78281f; }
  .state-retrying { background: #fdebd0; color: #7e5109; } .state-queued, .state-sending { background: #d6eaf8; color: #1b4f72; }
  .error { color: #922b21; font-size: 13px; } .muted { color: #566573; }
  .flash { background: #d4efdf; border: 1px solid #7dcea0; padding: 8px 12px; border-radius: 4px; margin-bottom: 14px; }
  .flash.bad { background: #fadbd8; border-color: #f1948a; }
  .banner { background: #fadbd8; border-bottom: 2px solid #c0392b; color: #78281f; padding: 10px 24px; margin: 0; }
  button { font: inherit; padding: 4px 12px; border-radius: 4px; border: 1px solid #1b4f72; background: #2471a3; color: #fff; cursor: pointer; }
  header button { background: transparent; border-color: #aab7b8; }
  pre { white-space: pre-wrap; word-break: break-word; background: #f8f9f9; border: 1px solid #eaeded; padding: 10px; font-size: 12.5px; max-height: 480px; overflow: auto; }
  iframe { width: 100%; height: 640px; border: 1px solid #d5d8dc; background: #fff; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; } dt { color: #566573; }
  input[type=password] { font: inherit; padding: 6px 8px; width: 320px; }
`;

/**
 * The Content-Security-Policy of every dashboard page: nothing may load from elsewhere and no
 * script runs at all; inline styles are allowed (the page's and the mail's). The sent mail's HTML
 * is shown in a sandboxed srcdoc iframe, which inherits this policy, so a remote image or a script
 * in a mail cannot load or run either.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface PageContext {
  csrf?: string;
  /** Outcomes of sends the store refused, still held in memory: shown as a banner above every page. */
  unrecorded?: number;
  /** Configuration warnings (an unsigned webhook open to the network), shown above the page. */
  notices?: string[];
}

/** The document around every page. */
export function renderLayout(title: string, body: SafeHtml, ctx: PageContext): string {
  const nav = ctx.csrf
    ? html`<a href="/ui">Deliveries</a><form method="post" action="/ui/logout"><input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit">Log out</button></form>`
    : '';
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · compliance-relay</title><style>${new SafeHtml(STYLE)}</style></head>
<body><header><span>compliance-relay</span>${nav}</header>${renderUnrecordedBanner(ctx.unrecorded)}<main>${(ctx.notices ?? []).map((n) => html`<p class="flash bad notice" role="alert">${n}</p>`)}${body}</main></body></html>`
    .value;
}

/** The warning that mails were sent whose outcome the store has not recorded yet (issue 21). */
function renderUnrecordedBanner(unrecorded: number | undefined): SafeHtml | '' {
  if (!unrecorded) return '';
  return html`<p class="banner" role="alert" data-unrecorded="${unrecorded}"><strong>The store refuses writes:</strong> ${unrecorded} outcome(s) of sends are not recorded yet. The relay keeps them in memory and retries (at MAX_UNRECORDED_OUTCOMES it claims no new delivery). Free space or bring the database back: a restart before they are recorded mails them again.</p>`;
}

/** The login form. */
export function renderLogin(error: string | undefined): SafeHtml {
  return html`<section><h1>Log in</h1>
<p class="muted">Enter the relay's ADMIN_TOKEN. The browser keeps a signed session cookie, not the token.</p>
${error ? html`<p class="flash bad" role="alert">${error}</p>` : ''}
<form method="post" action="/ui/login"><p><label>Admin token<br><input type="password" name="token" autocomplete="current-password" required maxlength="1024" autofocus></label></p><p><button type="submit">Log in</button></p></form></section>`;
}

export interface DeliveryRow {
  record: DeliveryRecord;
  content: DeliveryContent;
}

function stateBadge(state: string): SafeHtml {
  return html`<span class="state state-${state}">${state}</span>`;
}

function describeContent(content: DeliveryContent): SafeHtml {
  if (content.kind === 'report') {
    const r = content.report;
    return html`Report ${r.id}: ${r.total_passed}/${r.total_count} passed (${formatPercent(r.total_passed, r.total_count)})`;
  }
  if (content.kind === 'watchdog')
    return html`Watchdog: ${content.alert.kind === 'overdue' ? 'no report received' : 'reports arriving again'}`;
  return html`<span class="muted">${content.reason}</span>`;
}

/** The list of recent deliveries with the chart above it. */
export function renderDeliveries(input: {
  rows: DeliveryRow[];
  chart: SafeHtml;
  chartCount: number;
  csrf: string;
  flash?: { text: string; bad: boolean };
  formatTime: (ms: number) => string;
  /** With several NetBox sources: their names (each row names its source) and the one listed alone, if any. */
  sources?: { names: string[]; selected?: string };
}): SafeHtml {
  const named = input.sources !== undefined;
  const rows = input.rows.map(({ record: d, content }) => {
    const retry =
      d.state === 'dead'
        ? html`<form method="post" action="/ui/deliveries/${d.id}/retry"><input type="hidden" name="csrf" value="${input.csrf}"><button type="submit" aria-label="Retry delivery ${d.id}">Retry</button></form>`
        : '';
    return html`<tr data-delivery="${d.id}" data-state="${d.state}"><td><a href="/ui/deliveries/${d.id}">#${d.id}</a></td><td>${named ? html`<span class="source" data-source="${d.netboxSource}">${d.netboxSource}</span> · ` : ''}${describeContent(content)}</td><td>${input.formatTime(d.receivedAt)}</td><td>${stateBadge(d.state)}</td><td>${d.attempts}</td><td>${d.lastError ? html`<span class="error">${d.lastErrorCode ? `${d.lastErrorCode}: ` : ''}${truncate(d.lastError, 160)}</span>` : ''}</td><td>${retry}</td></tr>`;
  });
  return html`${input.flash ? html`<p class="flash${input.flash.bad ? ' bad' : ''}" role="status">${input.flash.text}</p>` : ''}
${input.sources ? renderSourceFilter(input.sources) : ''}<section><h2>Pass percentage per severity (last ${input.chartCount} reports${input.sources?.selected ? html` of ${input.sources.selected}` : ''})</h2>${input.chart}</section>
<section><h1>Recent deliveries</h1>
<table><thead><tr><th>Delivery</th><th>What</th><th>Received</th><th>State</th><th>Attempts</th><th>Last error</th><th></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="7" class="muted">No deliveries yet.</td></tr>`}</tbody></table></section>`;
}

/** Links that list one NetBox source alone (its chart too), or all of them. */
function renderSourceFilter(sources: { names: string[]; selected?: string }): SafeHtml {
  const link = (name: string | undefined) => {
    const label = name ?? 'all sources';
    const href = name === undefined ? '/ui' : `/ui?source=${encodeURIComponent(name)}`;
    return sources.selected === name ? html`<strong aria-current="page">${label}</strong>` : html`<a href="${href}">${label}</a>`;
  };
  return html`<nav class="sources" aria-label="NetBox sources">NetBox source: ${[undefined, ...sources.names].map((n, i) => html`${i > 0 ? ' · ' : ''}${link(n)}`)}</nav>`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** The header block of a raw message (everything before the first empty line), unfolded lines kept. */
export function headerBlock(raw: Buffer): string {
  const text = raw.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return (end === -1 ? text : text.slice(0, end)).replace(/\r\n/g, '\n');
}

/** A page for one delivery: what it holds, what happened, and the exact mail that was sent. */
export function renderDelivery(input: {
  record: DeliveryRecord;
  content: DeliveryContent;
  sent: SentMessage | undefined;
  csrf: string;
  formatTime: (ms: number) => string;
  reportLink?: string;
  /** The routing decision and mail state of each route (ROUTES_FILE), suppressed ones with their reason. */
  routes?: RouteMailRecord[];
  /** Several NetBox sources: the page names the delivery's. */
  named?: boolean;
}): SafeHtml {
  const d = input.record;
  const t = (ms: number | null) => (ms === null ? '—' : input.formatTime(ms));
  const summary = html`<section><h1>Delivery #${d.id} ${stateBadge(d.state)}</h1><dl>
<dt>What</dt><dd>${describeContent(input.content)}${input.reportLink ? html` · <a href="${input.reportLink}" rel="noreferrer">open in NetBox</a>` : ''}</dd>
${input.named ? html`<dt>NetBox source</dt><dd>${d.netboxSource}</dd>` : ''}<dt>Received</dt><dd>${t(d.receivedAt)} from ${d.source}</dd>
<dt>Attempts</dt><dd>${d.attempts}</dd>
${d.nextAttemptAt !== null && d.state !== 'sent' ? html`<dt>Next attempt</dt><dd>${t(d.nextAttemptAt)}</dd>` : ''}
${d.sentAt !== null ? html`<dt>Sent</dt><dd>${t(d.sentAt)}</dd>` : ''}
${d.lastError ? html`<dt>Last error</dt><dd class="error">${d.lastErrorCode ?? ''} ${d.lastError}</dd>` : ''}
${d.messageId ? html`<dt>Message-ID</dt><dd><code>${d.messageId}</code></dd>` : ''}
</dl>${d.state === 'dead' ? html`<form method="post" action="/ui/deliveries/${d.id}/retry"><input type="hidden" name="csrf" value="${input.csrf}"><p><button type="submit">Retry</button></p></form>` : ''}</section>`;

  const counts =
    input.content.kind === 'report'
      ? html`<section><h2>Report counts</h2><table><thead><tr><th>Severity</th><th>Passed</th><th>Pass rate</th></tr></thead><tbody>${(
          [
            ['HIGH', input.content.report.high_passed, input.content.report.high_count],
            ['MIDDLE', input.content.report.middle_passed, input.content.report.middle_count],
            ['LOW', input.content.report.low_passed, input.content.report.low_count],
            ['All', input.content.report.total_passed, input.content.report.total_count],
          ] as const
        ).map(
          ([name, p, c]) => html`<tr><td>${name}</td><td>${c === 0 ? '—' : `${p}/${c}`}</td><td>${formatPercent(p, c)}</td></tr>`,
        )}</tbody></table></section>`
      : input.content.kind === 'watchdog'
        ? renderAlert(input.content.alert, input.formatTime)
        : '';

  const mail = input.sent
    ? html`<section><h2>Where it went</h2><dl><dt>Envelope from</dt><dd>${input.sent.envelopeFrom}</dd><dt>Envelope to</dt><dd>${input.sent.envelopeTo.join(', ')}</dd><dt>Server answer</dt><dd>${input.sent.response}</dd><dt>Sent</dt><dd>${input.formatTime(input.sent.sentAt)}</dd></dl>
<p><a href="/ui/deliveries/${d.id}/message.eml">Download the message (.eml)</a></p></section>
<section><h2>Headers</h2><pre class="mail-headers">${headerBlock(input.sent.raw)}</pre></section>
${input.sent.html !== null ? html`<section><h2>HTML part</h2><iframe title="The HTML part of the mail" sandbox="" referrerpolicy="no-referrer" srcdoc="${buildSrcdoc(input.sent.html)}"></iframe></section>` : ''}
${input.sent.text !== null ? html`<section><h2>Text part</h2><pre class="mail-text">${input.sent.text}</pre></section>` : ''}`
    : html`<section><h2>Mail</h2><p class="muted">${d.state === 'sent' ? 'This delivery was sent before the relay kept copies of sent mail.' : 'Not sent yet.'}</p></section>`;
  const routes = input.routes?.length
    ? html`<section><h2>Routes</h2><table><thead><tr><th>Route</th><th>State</th><th>Why</th><th>Mail</th></tr></thead><tbody>${input.routes.map(
        (r) =>
          html`<tr><td>${r.route}</td><td>${r.state}${r.reminder ? ' (reminder)' : ''}</td><td>${r.reason}</td><td>${r.messageId ? html`<code>${r.messageId}</code>` : ''}${r.lastError ? html`<span class="error">${r.lastErrorCode ?? ''} ${r.lastError}</span>` : ''}</td></tr>`,
      )}</tbody></table></section>`
    : '';
  return html`<p><a href="/ui">← All deliveries</a></p>${summary}${routes}${counts}${mail}`;
}

function renderAlert(alert: WatchdogAlert, formatTime: (ms: number) => string): SafeHtml {
  return html`<section><h2>Watchdog</h2><dl><dt>Kind</dt><dd>${alert.kind}</dd><dt>Silent since</dt><dd>${formatTime(alert.silentSince)}</dd>${alert.resumedAt ? html`<dt>Resumed</dt><dd>${formatTime(alert.resumedAt)}</dd>` : ''}</dl></section>`;
}

/**
 * The mail's HTML for the iframe's srcdoc, with its own CSP as a second fence (no scripts, no
 * remote loads) in case a browser does not apply the page's policy to srcdoc documents.
 */
function buildSrcdoc(mailHtml: string): string {
  return `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">${mailHtml}`;
}

import { html, type ErrorIssue, type SafeHtml } from '../shared';
import { buildWaiverFormPath, classifyWaiver, WAIVER_MAX_DAYS_AHEAD, WAIVER_STATUSES } from '../waivers';
import type { Waiver, WaiverFilter, WaiverRequest, WaiverStatus } from '../waivers';
import type { Page } from './render-pages';

/** The list's filters as typed (kept in the form). */
export type WaiverListQuery = Pick<WaiverFilter, 'status' | 'source' | 'test' | 'device'>;

/** The add form's fields as typed or pre-filled (from the mail's "Accept as an exception…" link). */
export type WaiverFormValues = Partial<WaiverRequest>;

const STATUS_LABEL: Record<WaiverStatus, string> = { active: 'active', expiring: 'expiring within 7 days', expired: 'expired' };

/** The waivers page: filters, what the last POST did, and one row per waiver with its expire form when it can be ended. */
export function renderWaiverList(input: {
  page: Page;
  waivers: readonly Waiver[];
  query: WaiverListQuery;
  sources: readonly string[];
  now: number;
  flash?: { text: string; bad: boolean };
}): SafeHtml {
  const { page, query } = input;
  const tabs = [undefined, ...WAIVER_STATUSES].map((status) => {
    const params = new URLSearchParams(status ? { status } : {});
    const current = query.status === status ? html` aria-current="page"` : '';
    return html`<a class="count" href="/ui/waivers${params.size ? `?${params.toString()}` : ''}"${current}>${status ?? 'all'}</a>`;
  });
  const rows = input.waivers.map((w) => renderWaiverRow(w, input.now, page));
  return html`<section><h1>Accepted exceptions</h1>
${input.flash ? html`<p class="flash${input.flash.bad ? ' bad' : ''}" role="status">${input.flash.text}</p>` : ''}
<p class="muted">A waiver takes one failing test on one device (or on every device, with a reason) out of the mails until its date. Active includes expiring; expired waivers stay here as history.</p>
<p><a href="/ui/waivers/new">Add a waiver…</a></p>
<nav class="counts" aria-label="Status">${tabs}</nav>
<form class="filters" method="get" action="/ui/waivers">
<label>Status<select name="status"><option value="">all</option>${WAIVER_STATUSES.map((s) => html`<option value="${s}"${query.status === s ? ' selected' : ''}>${s}</option>`)}</select></label>
<label>Source<select name="source"><option value="">all</option>${input.sources.map((s) => html`<option${query.source === s ? ' selected' : ''}>${s}</option>`)}</select></label>
<label class="wide">Test<input name="test" value="${query.test ?? ''}" maxlength="200"></label>
<label class="wide">Device<input name="device" value="${query.device ?? ''}" maxlength="200"></label>
<button type="submit">Filter</button></form>
${rows.length ? html`<table class="waivers"><thead><tr><th>Waiver</th><th>Test · device</th><th>Until</th><th>Why · who</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p class="muted">No waivers${query.status || query.source || query.test || query.device ? ' match these filters' : ''}.</p>`}
</section>`;
}

function renderWaiverRow(w: Waiver, now: number, page: Page): SafeHtml {
  const status = classifyWaiver(w, now);
  const device = w.device ?? html`<strong>all devices</strong>`;
  const origin = w.origin === 'file' ? html`<br><span class="muted">WAIVERS_FILE (read-only)</span>` : '';
  const ended = w.expiredAt !== null ? html`<br><span class="muted">ended ${page.formatTime(w.expiredAt)} by ${w.expiredBy}</span>` : '';
  const renew = html`<a href="${buildWaiverFormPath(w)}">Renew…</a>`;
  const expire =
    w.origin === 'store' && status !== 'expired'
      ? html`<form method="post" action="/ui/waivers/${w.id}/expire"><input type="hidden" name="csrf" value="${page.csrf}"><label>Your name <input name="author" required maxlength="200"></label> <button type="submit" aria-label="Expire waiver ${w.id} now">Expire now</button></form>`
      : '';
  return html`<tr data-waiver="${w.id}" data-status="${status}" data-origin="${w.origin}"><td>#${w.id} <span class="state state-${status === 'expired' ? 'dead' : status === 'expiring' ? 'retrying' : 'sent'}">${STATUS_LABEL[status]}</span><br><span class="muted">${w.source}</span>${origin}</td><td>${w.test} · ${device}</td><td>${w.until}${ended}</td><td>${w.reason || html`<span class="muted">(no reason given)</span>`}<br><span class="muted">${w.author}, ${page.formatTime(w.createdAt)}</span></td><td>${renew}${expire}</td></tr>`;
}

/** The add form, pre-filled from a link or from what was typed, with the problems of the last try. */
export function renderWaiverForm(
  page: Page,
  input: { values: WaiverFormValues; sources: readonly string[]; issues?: readonly ErrorIssue[] },
): SafeHtml {
  const v = input.values;
  const issues = input.issues?.length
    ? html`<div class="flash bad" role="alert"><p>The waiver was not added:</p><ul>${input.issues.map((i) => html`<li><code>${i.path}</code> ${i.message}</li>`)}</ul></div>`
    : '';
  return html`<section><h1>Accept a failing test as an exception</h1>${issues}
<p class="muted">The test stops counting as a failure in the mails until the end of the day you give (UTC), at most ${WAIVER_MAX_DAYS_AHEAD} days ahead. Every add and expire is written to the relay's log.</p>
<form method="post" action="/ui/waivers" class="waiver-form"><input type="hidden" name="csrf" value="${page.csrf}">
<p><label>NetBox source<br><select name="source">${input.sources.map((s) => html`<option${v.source === s ? ' selected' : ''}>${s}</option>`)}</select></label></p>
<p><label>Test (its name in NetBox)<br><input name="test" value="${v.test ?? ''}" required maxlength="200"></label></p>
<p><label>Device<br><input name="device" value="${v.device ?? ''}" maxlength="200"></label> <label><input type="checkbox" name="all_devices" value="on"${v.allDevices ? ' checked' : ''}> all devices (a reason is then required)</label></p>
<p><label>Until (last day, YYYY-MM-DD)<br><input type="date" name="until" value="${v.until ?? ''}" required></label></p>
<p><label>Reason<br><textarea name="reason" rows="3" cols="60" maxlength="2000">${v.reason ?? ''}</textarea></label></p>
<p><label>Your name<br><input name="author" value="${v.author ?? ''}" required maxlength="200"></label></p>
<p><button type="submit">Add waiver</button> <a href="/ui/waivers">Cancel</a></p></form></section>`;
}

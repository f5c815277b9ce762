import { describeFailureOutcome, html, readFailureFacts, type ErrorIssue, type FailureCatalogue, type SafeHtml } from '../shared';
import { describeMailError } from '../notify';
import { DELIVERY_STATES, type DeliveryRecord, type DeliveryState, type RouteMailRecord } from '../store';
import { buildFilterParams, type ListQuery } from '../http';
import type { DashboardOptions, DigestsInput } from './dashboard-options';
import type { DeliveryContent } from './read-delivery-content';
import { describeContent, stateBadge, type Page } from './render-pages';

/** One page of the list and the keys of its neighbours, when there are any (keyset paging: ids, never offsets). */
export interface ListPage {
  rows: { record: DeliveryRecord; content: DeliveryContent; netboxLink?: string; routes: RouteMailRecord[] }[];
  olderThan?: number;
  newerThan?: number;
}

/** With more than one source, each row names its source and the list filters by it. */
export interface DeliveriesInput extends Pick<DashboardOptions, 'failures' | 'routeNames' | 'sources'> {
  list?: ListPage;
  /** The query as given (kept in the form), and its problems when it is invalid. */
  query: Partial<Record<keyof ListQuery, string | number>>;
  issues?: ErrorIssue[];
  counts: Record<DeliveryState, number>;
  /** The pass chart of each NetBox source the filters select (`source` absent: the default source alone). */
  charts: { source?: string; count: number; chart: SafeHtml }[];
  flash?: { text: string; bad: boolean };
  digests?: DigestsInput;
}

/** The digests beside the deliveries: each route's next run, then the latest digests, each linking its delivery (and its mail). */
function renderDigests(input: DigestsInput, formatTime: (ms: number) => string): SafeHtml {
  const schedules = html`<table class="digest-routes stack"><thead><tr><th>Digest route</th><th>Schedule</th><th>Next run</th></tr></thead><tbody>${input.schedules.map(
    (s) =>
      html`<tr data-digest-route="${s.route}"><td>${s.route}</td><td data-label="Schedule"><code>${s.schedule}</code> (${s.timezone})</td><td data-label="Next run">${s.nextRunAt === null ? 'never' : formatTime(s.nextRunAt)}</td></tr>`,
  )}</tbody></table>`;
  const periods = input.periods.length
    ? html`<table class="digests stack"><thead><tr><th>Digest</th><th>Period</th><th>State</th></tr></thead><tbody>${input.periods.map(
        (p) =>
          html`<tr><td><a href="/ui/deliveries/${p.deliveryId}">#${p.deliveryId}</a> ${p.route}${p.late ? ' (late)' : ''}</td><td data-label="Period">${formatTime(p.periodStart)} to ${formatTime(p.periodEnd)}</td><td data-label="State">${p.state ? stateBadge(p.state) : ''}</td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">No digest sent yet.</p>`;
  return html`<section><h2>Digests</h2>${schedules}${periods}</section>`;
}

/** The list page: counts per state, the chart, the filters, one page of deliveries and the pager. */
export function renderDeliveries(page: Page, input: DeliveriesInput): SafeHtml {
  const total = DELIVERY_STATES.reduce((n, s) => n + input.counts[s], 0);
  const counts = html`<nav class="counts" aria-label="Deliveries per state"><a href="/ui" class="count"${input.query.state === undefined ? html` aria-current="page"` : ''}>all <strong>${total}</strong></a>${DELIVERY_STATES.map(
    (s) =>
      html`<a href="/ui?state=${s}" class="count count-${s}" data-count="${s}"${input.query.state === s ? html` aria-current="page"` : ''}>${s} <strong>${input.counts[s]}</strong></a>`,
  )}</nav>`;
  const issues = input.issues?.length
    ? html`<div class="flash bad" role="alert"><p>These filters cannot be used:</p><ul class="filter-issues">${input.issues.map(
        (i) => html`<li data-param="${i.path}"><strong>${i.path}</strong> ${i.message}</li>`,
      )}</ul></div>`
    : '';
  return html`${input.flash ? html`<p class="flash${input.flash.bad ? ' bad' : ''}" role="status">${input.flash.text}</p>` : ''}
<section><h1>Deliveries</h1>${counts}</section>
${input.charts.map(
  (c) =>
    html`<section><h2>Pass percentage per severity${c.source === undefined ? '' : html`, NetBox source ${c.source}`} (last ${c.count} reports)</h2>${c.chart}</section>`,
)}
${input.digests?.schedules.length ? renderDigests(input.digests, page.formatTime) : ''}
<section><h2>Find deliveries</h2>${renderFilterForm(input)}${issues}${input.list ? renderTable(page, input, input.list) : ''}</section>`;
}

function renderFilterForm(input: DeliveriesInput): SafeHtml {
  const q = input.query;
  const value = (name: keyof ListQuery) => (q[name] === undefined ? '' : String(q[name]));
  return html`<form method="get" action="/ui" class="filters" role="search" aria-label="Filter deliveries">
<label>State<select name="state"><option value="">any</option>${DELIVERY_STATES.map(
    (s) => html`<option value="${s}"${q.state === s ? html` selected` : ''}>${s}</option>`,
  )}</select></label>
<label>Route<input name="route" value="${value('route')}" maxlength="100" list="route-names" autocomplete="off"></label>
<datalist id="route-names">${(input.routeNames ?? []).map((r) => html`<option value="${r}"></option>`)}</datalist>
${
  input.sources && input.sources.length > 1
    ? html`<label>NetBox source<select name="source"><option value="">any</option>${input.sources.map(
        ({ name: n }) => html`<option value="${n}"${q.source === n ? html` selected` : ''}>${n}</option>`,
      )}</select></label>`
    : ''
}
<label>Report id<input name="report" value="${value('report')}" inputmode="numeric" maxlength="16" size="8"></label>
<label>From<input type="date" name="from" value="${value('from')}"></label>
<label>To<input type="date" name="to" value="${value('to')}"></label>
<label class="wide">Device or test<input type="search" name="q" value="${value('q')}" maxlength="100" placeholder="failing on…"></label>
<span class="filter-actions"><button type="submit">Filter</button> <a href="/ui">Clear</a></span>
</form>`;
}

function renderTable(page: Page, input: DeliveriesInput, list: ListPage): SafeHtml {
  const back = buildFilterParams(input.query).toString();
  const rows = list.rows.map((row) => renderRow(row, page, input, back));
  const link = (key: 'before' | 'after', id: number) => {
    const params = buildFilterParams(input.query);
    params.set(key, String(id));
    return `/ui?${params.toString()}`;
  };
  const pager = html`<nav class="pager" aria-label="Pages">${list.newerThan !== undefined ? html`<a href="${link('after', list.newerThan)}" rel="prev">← Newer</a>` : ''}${
    list.newerThan !== undefined || list.olderThan !== undefined ? html`<a href="/ui?${back}">Newest</a>` : ''
  }${list.olderThan !== undefined ? html`<a href="${link('before', list.olderThan)}" rel="next">Older →</a>` : ''}</nav>`;
  return html`<table class="deliveries stack"><thead><tr><th scope="col">Delivery</th><th scope="col">What</th><th scope="col">State</th><th scope="col">Last error</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5" class="muted">${back ? 'No delivery matches these filters.' : 'No deliveries yet.'}</td></tr>`}</tbody></table>${pager}`;
}

function renderRow(row: ListPage['rows'][number], page: Page, input: DeliveriesInput, back: string): SafeHtml {
  const { record: d, content } = row;
  const named = (input.sources?.length ?? 0) > 1;
  const high = content.kind === 'report' && content.counts.HIGH.passed < content.counts.HIGH.count ? content.counts.HIGH : undefined;
  const flag = high
    ? html` <span class="flag-high" title="HIGH severity tests failed">HIGH failing ${high.count - high.passed}/${high.count}</span>`
    : '';
  const netbox = row.netboxLink ? html` <a href="${row.netboxLink}" rel="noreferrer" class="netbox-link">open in NetBox</a>` : '';
  const routes = row.routes.length
    ? html`<br><span class="muted routes">${row.routes.map((r) => `${r.route}: ${r.outcome === 'send' ? r.state : r.outcome}`).join(', ')}</span>`
    : '';
  const next =
    d.state === 'retrying' && d.nextAttemptAt !== null
      ? html`<br><span class="next-attempt">next try ${page.formatTime(d.nextAttemptAt)}</span>`
      : '';
  const error = d.lastError
    ? html`<span class="error-words">${describeFailure(d.lastErrorCode, d.lastError, input.failures)}</span><br><span class="error">${d.lastErrorCode ? `${d.lastErrorCode}: ` : ''}${truncate(d.lastError, 160)}</span>`
    : '';
  return html`<tr data-delivery="${d.id}" data-state="${d.state}"${high ? html` data-high-failing="true"` : ''}><td data-label="Delivery"><a href="/ui/deliveries/${d.id}">#${d.id}</a><br><span class="muted">${page.formatTime(d.receivedAt)}</span></td><td data-label="What">${named ? html`<span class="source" data-source="${d.source}">${d.source}</span> · ` : ''}${describeContent(content)}${flag}${d.receivedVia === 'catch-up' ? html` <span class="received-catch-up" title="Fetched from NetBox by the relay: its webhook never arrived">fetched late</span>` : ''}${netbox}</td><td data-label="State">${stateBadge(d.state)} <span class="muted">${d.attempts} attempt${d.attempts === 1 ? '' : 's'}</span>${next}${routes}</td><td data-label="Last error">${error}</td><td>${renderAction(d, page.csrf, back)}</td></tr>`;
}

/** Retry for a dead delivery (queued again, attempts reset); retry now for a retrying one (its wait skipped). */
function renderAction(d: DeliveryRecord, csrf: string, back: string): SafeHtml | '' {
  const form = (action: string, label: string, aria: string) =>
    html`<form method="post" action="/ui/deliveries/${d.id}/${action}"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="back" value="${back}"><button type="submit" aria-label="${aria}">${label}</button></form>`;
  if (d.state === 'dead') return form('retry', 'Retry', `Retry delivery ${d.id}`);
  if (d.state === 'retrying') return form('retry-now', 'Retry now', `Retry delivery ${d.id} now`);
  return '';
}

/**
 * A failure in words: what to change when a user can fix it (refused, DNS, TLS, certificate, login: the
 * same words as `verify-smtp`), else the catalogue's words for its code; then whether it is tried again.
 */
function describeFailure(code: string | null, error: string, catalogue: FailureCatalogue): string {
  const facts = readFailureFacts(code, catalogue);
  const fixable = code ? describeMailError({ code, message: error }) : undefined;
  return `${fixable ?? facts.words} ${describeFailureOutcome(facts)}`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

import { describeFailureOutcome, readFailureFacts, type ErrorIssue, type FailureCatalogue } from '../shared';
import { describeMailError } from '../notify';
import { DELIVERY_STATES, type DeliveryRecord, type DeliveryState, type RouteMailRecord } from '../store';
import { buildFilterParams, type ListQuery } from '../http';
import type { PassChartView } from './build-pass-chart';
import { describeContent, type DeliveryContent } from './build-delivery-view';
import type { DashboardOptions, DigestsInput, Page } from './render-page';

/** One page of the list and the keys of its neighbours, when there are any (keyset paging: ids, never offsets). */
export interface ListPage {
  rows: { record: DeliveryRecord; content: DeliveryContent; netboxLink?: string; routes: RouteMailRecord[] }[];
  olderThan?: number;
  newerThan?: number;
}

export interface DeliveriesInput extends Pick<DashboardOptions, 'failures' | 'routeNames' | 'sources'> {
  list?: ListPage;
  /** The query as given (kept in the form), and its problems when it is invalid. */
  query: Partial<Record<keyof ListQuery, string | number>>;
  issues?: ErrorIssue[];
  counts: Record<DeliveryState, number>;
  /** The pass chart of each NetBox source the filters select (`source` absent: the default source alone). */
  charts: PassChartView[];
  flash?: { text: string; bad: boolean };
  digests?: DigestsInput;
}

/** The view of templates/dashboard/deliveries.hbs: counts per state, the charts, the digests, the filters, one page of deliveries and the pager. */
export function buildDeliveriesView(page: Page, input: DeliveriesInput) {
  const { query } = input;
  const { formatTime } = page;
  const sources = input.sources && input.sources.length > 1 ? input.sources : undefined;
  return {
    flash: input.flash,
    total: DELIVERY_STATES.reduce((n, s) => n + input.counts[s], 0),
    allStates: query.state === undefined,
    states: DELIVERY_STATES.map((state) => ({ state, count: input.counts[state], current: query.state === state })),
    charts: input.charts,
    digests: input.digests && {
      schedules: input.digests.schedules.map((s) => ({ ...s, nextRun: s.nextRunAt === null ? 'never' : formatTime(s.nextRunAt) })),
      periods: input.digests.periods.map((p) => ({ ...p, start: formatTime(p.periodStart), end: formatTime(p.periodEnd) })),
    },
    query,
    routeNames: input.routeNames,
    sources: sources?.map(({ name }) => ({ name, selected: query.source === name })),
    issues: input.issues,
    list: input.list && buildListView(page, input, input.list),
  };
}

function buildListView(page: Page, input: DeliveriesInput, list: ListPage) {
  const back = buildFilterParams(input.query).toString();
  const link = (key: 'before' | 'after', id: number | undefined) => {
    if (id === undefined) return undefined;
    const params = buildFilterParams(input.query);
    params.set(key, String(id));
    return `/ui?${params.toString()}`;
  };
  return {
    rows: list.rows.map((row) => buildRowView(row, page, input, back)),
    back,
    newer: link('after', list.newerThan),
    paged: list.newerThan !== undefined || list.olderThan !== undefined,
    older: link('before', list.olderThan),
  };
}

function buildRowView(row: ListPage['rows'][number], page: Page, input: DeliveriesInput, back: string) {
  const { record: d, content } = row;
  const high = content.kind === 'report' && content.counts.HIGH.passed < content.counts.HIGH.count ? content.counts.HIGH : undefined;
  return {
    d,
    received: page.formatTime(d.receivedAt),
    source: (input.sources?.length ?? 0) > 1 ? d.source : undefined,
    what: describeContent(content),
    high: high && { failed: high.count - high.passed, count: high.count },
    catchUp: d.receivedVia === 'catch-up',
    netboxLink: row.netboxLink,
    oneAttempt: d.attempts === 1,
    nextTry: d.state === 'retrying' && d.nextAttemptAt !== null ? page.formatTime(d.nextAttemptAt) : undefined,
    routes: row.routes.map((r) => `${r.route}: ${r.outcome === 'send' ? r.state : r.outcome}`).join(', '),
    error: d.lastError
      ? {
          words: describeFailure(d.lastErrorCode, d.lastError, input.failures),
          text: `${d.lastErrorCode ? `${d.lastErrorCode}: ` : ''}${truncate(d.lastError, 160)}`,
        }
      : undefined,
    action: buildAction(d, back),
  };
}

/** Retry for a dead delivery (queued again, attempts reset); retry now for a retrying one (its wait skipped). */
function buildAction(d: DeliveryRecord, back: string) {
  if (d.state === 'dead') return { id: d.id, back, path: 'retry', label: 'Retry', aria: `Retry delivery ${d.id}` };
  if (d.state === 'retrying') return { id: d.id, back, path: 'retry-now', label: 'Retry now', aria: `Retry delivery ${d.id} now` };
  return undefined;
}

/** A failure in words (what to change when a user can fix it, as `verify-smtp` says), then whether it is tried again. */
function describeFailure(code: string | null, error: string, catalogue: FailureCatalogue): string {
  const facts = readFailureFacts(code, catalogue);
  const fixable = code ? describeMailError({ code, message: error }) : undefined;
  return `${fixable ?? facts.words} ${describeFailureOutcome(facts)}`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

import type { ErrorIssue } from '../shared';
import { buildWaiverFormPath, classifyWaiver, WAIVER_MAX_DAYS_AHEAD, WAIVER_STATUSES } from '../waivers';
import type { Waiver, WaiverFilter, WaiverRequest, WaiverStatus } from '../waivers';
import type { Page } from './render-page';

export type WaiverListQuery = Pick<WaiverFilter, 'status' | 'source' | 'test' | 'device'>;

/** The add form's fields as typed or pre-filled (from the mail's "Accept as an exception…" link). */
export type WaiverFormValues = Partial<WaiverRequest>;

const STATUS_LABEL: Record<WaiverStatus, string> = { active: 'active', expiring: 'expiring within 7 days', expired: 'expired' };
/** Each status in the colours of a delivery's state. */
const STATUS_BADGE: Record<WaiverStatus, string> = { active: 'sent', expiring: 'retrying', expired: 'dead' };

/** The view of templates/dashboard/waivers.hbs: filters, what the last POST did, and one row per waiver with its expire form when it can be ended. */
export function buildWaiverListView(input: {
  page: Page;
  waivers: readonly Waiver[];
  query: WaiverListQuery;
  sources: readonly string[];
  now: number;
  flash?: { text: string; bad: boolean };
}) {
  const { page, query } = input;
  return {
    flash: input.flash,
    query,
    statuses: WAIVER_STATUSES.map((status) => ({ status, current: query.status === status })),
    sources: input.sources.map((name) => ({ name, selected: query.source === name })),
    rows: input.waivers.map((w) => {
      const status = classifyWaiver(w, input.now);
      return {
        w,
        status,
        badge: STATUS_BADGE[status],
        label: STATUS_LABEL[status],
        fromFile: w.origin === 'file',
        ended: w.expiredAt !== null ? page.formatTime(w.expiredAt) : undefined,
        created: page.formatTime(w.createdAt),
        renew: buildWaiverFormPath(w),
        expirable: w.origin === 'store' && status !== 'expired',
      };
    }),
    filtered: Boolean(query.status || query.source || query.test || query.device),
  };
}

/** The view of templates/dashboard/waiver-form.hbs: pre-filled from a link or from what was typed, with the problems of the last try. */
export function buildWaiverFormView(input: { values: WaiverFormValues; sources: readonly string[]; issues?: readonly ErrorIssue[] }) {
  return {
    values: input.values,
    sources: input.sources.map((name) => ({ name, selected: input.values.source === name })),
    issues: input.issues,
    maxDaysAhead: WAIVER_MAX_DAYS_AHEAD,
  };
}

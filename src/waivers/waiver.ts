import { z } from 'zod';

/** A day in milliseconds: `until` is a calendar day, and the bounds on it are counted in days. */
export const DAY_MS = 86_400_000;

/** How close to its end an active waiver counts as expiring: the mail flags it, the dashboard lists it apart. */
export const WAIVER_EXPIRING_DAYS = 7;

/** What a waiver is at a given time: in force and far from its end, in force within a week of it, or over. */
export const WAIVER_STATUSES = ['active', 'expiring', 'expired'] as const;
export type WaiverStatus = (typeof WAIVER_STATUSES)[number];

/** A calendar day as people write it in a form, a file or a command line. */
const IsoDateSchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD (example: 2027-03-31)');

/** NetBox names (source, test, device) are short; the bounds keep a form or a file from storing a novel. */
export const WAIVER_NAME_MAX = 200;
export const WAIVER_REASON_MAX = 2000;

/**
 * An accepted exception: one failing test on one device (or on every device of the source, then with a
 * reason) is not counted as a failure until `until`, end of that day (UTC). Ending it early
 * (expire) moves `endsAt` to that moment and records who did it; the row is never deleted, so the
 * history of what was waived, by whom and why stays readable.
 */
export const WaiverSchema = z.object({
  /** Digits for a stored waiver; `file:<n>` for the n-th entry of WAIVERS_FILE. */
  id: z.string(),
  /** Where it was made: in the store (dashboard, admin API, CLI) or in WAIVERS_FILE, which only its file changes. */
  origin: z.enum(['store', 'file']),
  /** The NetBox source (`default`, or a name from SOURCES_FILE). */
  source: z.string().min(1).max(32),
  test: z.string().min(1).max(WAIVER_NAME_MAX),
  /** Null: every device of the source that fails this test. */
  device: z.string().min(1).max(WAIVER_NAME_MAX).nullable(),
  /** The last day the waiver holds, as given. */
  until: IsoDateSchema,
  /** When it stops holding (epoch ms): the end of `until` (UTC), or when it was expired, whichever came first. */
  endsAt: z.number().int(),
  /** Why the failure is accepted; empty only for a waiver on one named device. */
  reason: z.string().max(WAIVER_REASON_MAX),
  author: z.string().min(1).max(WAIVER_NAME_MAX),
  createdAt: z.number().int(),
  /** When someone ended it before its date, and who; null while it runs to its date. */
  expiredAt: z.number().int().nullable(),
  expiredBy: z.string().nullable(),
});
export type Waiver = z.infer<typeof WaiverSchema>;

/** A waiver to store: everything but what the store gives it (its id) and what only expiring sets. */
export type NewWaiver = Omit<Waiver, 'id' | 'origin' | 'expiredAt' | 'expiredBy'>;

/** The epoch ms at which a waiver running through `until` (UTC) stops holding: midnight after that day. */
export function buildWaiverEnd(until: string): number {
  const [year, month, day] = until.split('-').map(Number);
  return Date.UTC(year, month - 1, day + 1);
}

/** True when `text` (YYYY-MM-DD) is a day that exists: 2027-02-30 is refused, not rolled over. */
export function isCalendarDay(text: string): boolean {
  if (!IsoDateSchema.safeParse(text).success) return false;
  const [year, month, day] = text.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** True while the waiver holds at `at`: made by then and not ended yet. */
export function isWaiverInForce(waiver: Pick<Waiver, 'createdAt' | 'endsAt'>, at: number): boolean {
  return waiver.createdAt <= at && at < waiver.endsAt;
}

/** The waiver's status at `at`; one not made yet counts as active (it is about to hold). */
export function classifyWaiver(waiver: Pick<Waiver, 'endsAt'>, at: number): WaiverStatus {
  if (waiver.endsAt <= at) return 'expired';
  return waiver.endsAt - at <= WAIVER_EXPIRING_DAYS * DAY_MS ? 'expiring' : 'active';
}

/** A waiver as the admin API and `waivers list --json` show it: times as ISO 8601, its status at `now`. */
export function buildWaiverJson(waiver: Waiver, now: number) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: waiver.id,
    origin: waiver.origin,
    readOnly: waiver.origin === 'file',
    status: classifyWaiver(waiver, now),
    source: waiver.source,
    test: waiver.test,
    device: waiver.device,
    allDevices: waiver.device === null,
    until: waiver.until,
    endsAt: iso(waiver.endsAt),
    reason: waiver.reason,
    author: waiver.author,
    createdAt: iso(waiver.createdAt),
    expiredAt: iso(waiver.expiredAt),
    expiredBy: waiver.expiredBy,
  };
}

/**
 * The dashboard's add form, pre-filled for a (source, test, device): what a mail's "Accept as an
 * exception…" link and the list's "Renew…" open. Names only: the link grants nothing, the login does.
 */
export function buildWaiverFormPath(pair: { source: string; test: string; device?: string | null }): string {
  const params = new URLSearchParams({ source: pair.source, test: pair.test });
  if (pair.device) params.set('device', pair.device);
  return `/ui/waivers/new?${params.toString()}`;
}

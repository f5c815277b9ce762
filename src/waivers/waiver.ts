import { z } from 'zod';
import type { ErrorIssue } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';

/** A day in milliseconds: `until` is a calendar day, and the bounds on it are counted in days. */
export const DAY_MS = 86_400_000;

/** How close to its end an active waiver counts as expiring: the mail flags it, the dashboard lists it apart. */
export const WAIVER_EXPIRING_DAYS = 7;

/** What a waiver is at a given time: in force and far from its end, in force within a week of it, or over. */
export const WAIVER_STATUSES = ['active', 'expiring', 'expired'] as const;
export type WaiverStatus = (typeof WAIVER_STATUSES)[number];

/** NetBox names (source, test, device) are short; the bounds keep a form or a file from storing a novel. */
export const WAIVER_NAME_MAX = 200;
const WAIVER_REASON_MAX = 2000;

/**
 * An accepted exception: a failing test on one device (or on all, with a reason) is not counted until the end of `until`
 * (UTC). Expiring it early moves `endsAt` and records who; the row is never deleted, so the history stays readable.
 */
export interface Waiver extends NewWaiver {
  /** Digits for a stored waiver; `file:<n>` for the n-th entry of WAIVERS_FILE. */
  id: string;
  /** Where it was made: in the store (dashboard, admin API, CLI) or in WAIVERS_FILE, which only its file changes. */
  origin: 'store' | 'file';
  /** When someone ended it before its date, and who; null while it runs to its date. */
  expiredAt: number | null;
  expiredBy: string | null;
}

/** A waiver to store, as {@link parseNewWaiver} builds it: everything but its id and what only expiring sets. */
export interface NewWaiver {
  /** The NetBox source (`default`, or a name from SOURCES_FILE). */
  source: string;
  test: string;
  /** Null: every device of the source that fails this test. */
  device: string | null;
  /** The last day the waiver holds, as given (YYYY-MM-DD). */
  until: string;
  /** When it stops holding (epoch ms): the end of `until` (UTC), or when it was expired, whichever came first. */
  endsAt: number;
  /** Why the failure is accepted; empty only for a waiver on one named device. */
  reason: string;
  author: string;
  createdAt: number;
}

/** When a waiver running through `until` (UTC) stops holding (epoch ms): midnight after that day. */
export function buildWaiverEnd(until: string): number {
  const [year, month, day] = until.split('-').map(Number);
  return Date.UTC(year, month - 1, day + 1);
}

/** True when `text` (YYYY-MM-DD) is a day that exists: 2027-02-30 is refused, not rolled over. */
export function isCalendarDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const [year, month, day] = text.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
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

/** The dashboard's add form pre-filled for a pair (the mail's "Accept…", the list's "Renew…"): the link grants nothing. */
export function buildWaiverFormPath(pair: { source: string; test: string; device?: string | null }): string {
  const params = new URLSearchParams({ source: pair.source, test: pair.test });
  if (pair.device) params.set('device', pair.device);
  return `/ui/waivers/new?${params.toString()}`;
}

/** How far ahead a waiver's `until` may be, in days from when it is made: half a year, after which an exception must be looked at again. */
export const WAIVER_MAX_DAYS_AHEAD = 180;

const name = (what: string) =>
  z
    .string({ error: `is required (${what})` })
    .trim()
    .min(1, `is required (${what})`)
    .max(WAIVER_NAME_MAX, `must be at most ${WAIVER_NAME_MAX} characters`);

/** A waiver as asked for (API, CLI, form, WAIVERS_FILE): a device, or `allDevices` with a reason; an unticked box is absent. */
const WaiverRequestSchema = z.object({
  source: name('a NetBox source').optional(),
  test: name('the test name as NetBox shows it'),
  device: z.string().trim().max(WAIVER_NAME_MAX, `must be at most ${WAIVER_NAME_MAX} characters`).optional(),
  allDevices: z.boolean().optional(),
  until: z.string({ error: 'is required (YYYY-MM-DD)' }).trim(),
  reason: z.string().trim().max(WAIVER_REASON_MAX, `must be at most ${WAIVER_REASON_MAX} characters`).optional(),
  author: name('who accepts the exception'),
});
export type WaiverRequest = z.input<typeof WaiverRequestSchema>;

export interface WaiverRules {
  /** Now (epoch ms): the waiver's creation time, and the day `until` may not be before. */
  now: number;
  /** The configured NetBox source names; a waiver for another would never match a report. */
  sources: readonly string[];
  /** Where the waiver starts counting from, when not now (a WAIVERS_FILE entry's `created`). */
  createdAt?: number;
  /** A WAIVERS_FILE entry may have run out already: it stays, as history. */
  pastAllowed?: boolean;
}

/** Checks a waiver request and builds the waiver to store, or lists every problem (path and why) for a form or command to show at once. */
export function parseNewWaiver(input: unknown, rules: WaiverRules): { ok: true; waiver: NewWaiver } | { ok: false; issues: ErrorIssue[] } {
  const parsed = WaiverRequestSchema.safeParse(input);
  const issues: ErrorIssue[] = parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  // The rules below are checked on the fields that are valid on their own, so that one form shows every problem.
  const request = parsed.success ? parsed.data : readValidFields(input);
  const source = request.source ?? DEFAULT_SOURCE_NAME;
  const ruleIssues = [
    ...checkDevice(request),
    ...(request.until === undefined ? [] : checkUntil(request.until, rules)),
    ...(rules.sources.includes(source) ? [] : [{ path: 'source', message: `must be a configured source (${rules.sources.join(', ')})` }]),
  ];
  issues.push(...ruleIssues.filter((r) => !issues.some((i) => i.path === r.path)));
  if (!parsed.success || issues.length > 0) return { ok: false, issues };
  const { test, allDevices, device, until, reason, author } = parsed.data;
  return {
    ok: true,
    waiver: {
      source,
      test,
      device: allDevices ? null : device!,
      until,
      endsAt: buildWaiverEnd(until),
      reason: reason ?? '',
      author,
      createdAt: rules.createdAt ?? rules.now,
    },
  };
}

/** The fields of a refused request that its schema accepts one by one. */
function readValidFields(input: unknown): Partial<WaiverRequest> {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  return Object.fromEntries(
    Object.entries(WaiverRequestSchema.shape).flatMap(([key, schema]) => {
      const field = schema.safeParse(fields[key]);
      return field.success && field.data !== undefined ? [[key, field.data]] : [];
    }),
  );
}

/** One device, or all devices with a reason: a blanket exception must say why. */
function checkDevice(request: Partial<WaiverRequest>): ErrorIssue[] {
  const device = request.device ?? '';
  if (request.allDevices && device !== '')
    return [{ path: 'device', message: 'give a device or all devices, not both (leave the device empty to waive every device)' }];
  if (!request.allDevices && device === '') return [{ path: 'device', message: 'is required (or all devices, with a reason)' }];
  if (request.allDevices && !request.reason) return [{ path: 'reason', message: 'is required when the waiver covers all devices' }];
  return [];
}

/** `until` is a real day, not before the day the waiver starts, and at most {@link WAIVER_MAX_DAYS_AHEAD} after it. */
function checkUntil(until: string, rules: WaiverRules): ErrorIssue[] {
  if (!isCalendarDay(until)) return [{ path: 'until', message: 'must be a date as YYYY-MM-DD (example: 2027-03-31)' }];
  const firstDay = Math.floor((rules.createdAt ?? rules.now) / DAY_MS) * DAY_MS;
  const lastDay = buildWaiverEnd(until) - DAY_MS;
  if (!rules.pastAllowed && lastDay < Math.floor(rules.now / DAY_MS) * DAY_MS) return [{ path: 'until', message: 'is in the past' }];
  if (lastDay - firstDay <= WAIVER_MAX_DAYS_AHEAD * DAY_MS) return [];
  const first = new Date(firstDay).toISOString().slice(0, 10);
  return [{ path: 'until', message: `may be at most ${WAIVER_MAX_DAYS_AHEAD} days after ${first}` }];
}

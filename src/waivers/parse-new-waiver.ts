import { z } from 'zod';
import type { ErrorIssue } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { buildWaiverEnd, DAY_MS, isCalendarDay, WAIVER_NAME_MAX, WAIVER_REASON_MAX, type NewWaiver } from './waiver';

/** How far ahead a waiver's `until` may be, in days from when it is made: half a year, after which an exception must be looked at again. */
export const WAIVER_MAX_DAYS_AHEAD = 180;

const name = (what: string) =>
  z
    .string({ error: `is required (${what})` })
    .trim()
    .min(1, `is required (${what})`)
    .max(WAIVER_NAME_MAX, `must be at most ${WAIVER_NAME_MAX} characters`);

/**
 * A waiver as a person asks for it (admin API body, CLI flags, dashboard form, a WAIVERS_FILE entry):
 * a device, or `allDevices` with a reason. Text fields arrive as strings; a form's unticked box is absent.
 */
const WaiverRequestSchema = z.object({
  source: name('a NetBox source').optional(),
  test: name('the test name as NetBox shows it'),
  device: z.string().trim().max(WAIVER_NAME_MAX, `must be at most ${WAIVER_NAME_MAX} characters`).optional(),
  allDevices: z.boolean().optional(),
  until: z.string({ error: 'is required (YYYY-MM-DD)' }).trim(),
  reason: z.string().trim().max(WAIVER_REASON_MAX, `must be at most ${WAIVER_REASON_MAX} characters`).optional(),
  author: name('who accepts the exception'),
});

/** What deciding a new waiver needs besides the request. */
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

export type ParsedWaiver = { ok: true; waiver: NewWaiver } | { ok: false; issues: ErrorIssue[] };

/** Checks a waiver request and builds the waiver to store, or lists every problem (path and why) for a form or command to show at once. */
export function parseNewWaiver(input: unknown, rules: WaiverRules): ParsedWaiver {
  const parsed = WaiverRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) };
  const request = parsed.data;
  const issues = [...checkDevice(request), ...checkUntil(request.until, rules)];
  const source = request.source ?? DEFAULT_SOURCE_NAME;
  if (!rules.sources.includes(source))
    issues.push({ path: 'source', message: `must be a configured source (${rules.sources.join(', ')})` });
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    waiver: {
      source,
      test: request.test,
      device: request.allDevices ? null : request.device!,
      until: request.until,
      endsAt: buildWaiverEnd(request.until),
      reason: request.reason ?? '',
      author: request.author,
      createdAt: rules.createdAt ?? rules.now,
    },
  };
}

/** One device, or all devices with a reason: a blanket exception must say why. */
function checkDevice(request: z.infer<typeof WaiverRequestSchema>): ErrorIssue[] {
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

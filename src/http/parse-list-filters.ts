import { z } from 'zod';
import { RelayError, type ErrorIssue } from '../shared';
import { DELIVERY_STATES, type ListOptions } from '../store';
import { startOfDayMs } from '../report';
import { DAY_MS, isCalendarDay } from '../waivers';

/** The filters of the deliveries list (the dashboard's and the admin API's), in the order the dashboard's form shows them. */
export const FILTER_PARAMS = ['state', 'source', 'route', 'report', 'from', 'to', 'q'] as const;
export type FilterParam = (typeof FILTER_PARAMS)[number];

/** Longest route name or search text accepted (route names are short YAML keys; device names ≤ 64 in NetBox). */
const MAX_TEXT_LENGTH = 100;

/** An absent parameter and an empty form field are the same: no filter. */
export const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional()) as unknown as z.ZodOptional<T>;

const text = (what: string) =>
  z
    .string({ error: `must be given once, as text` })
    .trim()
    .min(1, `must not be blank`)
    .max(MAX_TEXT_LENGTH, `must be at most ${MAX_TEXT_LENGTH} characters (${what})`);

export const wholeNumber = (what: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string({ error: 'must be given once' })
    .regex(/^\d{1,16}$/, `must be ${what}: a whole number from 1`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `must be ${what}: a whole number from 1${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`);

const day = z
  .string({ error: 'must be given once' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date written YYYY-MM-DD')
  .refine(isCalendarDay, 'is not a day of the calendar');

/** Most deliveries the admin API lists at once. */
const ADMIN_MAX_LIMIT = 500;

/** The list's GET parameters; anything else in the query (a flash after a retry) is not a filter and is ignored. */
const ListQuerySchema = z
  .object({
    state: optional(z.enum(DELIVERY_STATES, { error: `must be one of ${DELIVERY_STATES.join(', ')}` })),
    source: optional(text('a NetBox source name from SOURCES_FILE')),
    route: optional(text('a route name from ROUTES_FILE')),
    report: optional(wholeNumber('a NetBox report id')),
    from: optional(day),
    to: optional(day),
    q: optional(text('part of a device or test name')),
    before: optional(wholeNumber('a delivery id')),
    after: optional(wholeNumber('a delivery id')),
    limit: optional(wholeNumber('a number of deliveries', ADMIN_MAX_LIMIT)),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { path: ['to'], message: 'must not be before from' })
  .refine((q) => q.before === undefined || q.after === undefined, { path: ['after'], message: 'cannot be combined with before' });
export type ListQuery = z.infer<typeof ListQuerySchema>;

/** The list's query as store options, or every problem with it (each naming its parameter). */
export function parseListFilters(
  query: Record<string, unknown>,
  timeZone: string,
): { ok: true; query: ListQuery; options: ListOptions } | { ok: false; issues: ErrorIssue[] } {
  const parsed = ListQuerySchema.safeParse(query);
  if (!parsed.success) return { ok: false, issues: listIssues(parsed.error) };
  const q = parsed.data;
  const options: ListOptions = {
    state: q.state,
    netboxSource: q.source,
    route: q.route,
    reportId: q.report,
    search: q.q,
    beforeId: q.before,
    afterId: q.after,
    limit: q.limit,
    // Days in `timeZone` (the dashboard's MAIL_TIMEZONE, the admin API's UTC): from the first millisecond of `from` to the end of `to`.
    receivedFrom: q.from === undefined ? undefined : startOfDayMs(q.from, timeZone),
    receivedBefore: q.to === undefined ? undefined : startOfDayMs(nextDay(q.to), timeZone),
  };
  return { ok: true, query: q, options };
}

export function parseQuery<T extends z.ZodType>(schema: T, query: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) throw new RelayError('INVALID_REQUEST', { issues: listIssues(parsed.error) });
  return parsed.data;
}

function listIssues(error: z.ZodError): ErrorIssue[] {
  return error.issues.map((i) => ({ path: String(i.path[0] ?? 'query'), message: i.message }));
}

/** The filters of a query as URL parameters (no paging key), for links that keep them. */
export function buildFilterParams(query: Partial<Record<FilterParam, string | number>>): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of FILTER_PARAMS) if (query[name] !== undefined) params.set(name, String(query[name]));
  return params;
}

function nextDay(value: string): string {
  return new Date(Date.parse(`${value}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

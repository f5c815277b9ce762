import { z } from 'zod';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const text = (max: number) => z.string().max(max);

/** The report as validity serializes it in `data`; unknown keys kept (an event rule's action_data may be merged in). */
export const ReportSchema = z
  .looseObject({
    id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    url: text(2048),
    display: text(300).optional(),
    device_count: count,
    test_count: count,
    total_passed: count,
    total_count: count,
    low_passed: count,
    low_count: count,
    middle_passed: count,
    middle_count: count,
    high_passed: count,
    high_count: count,
    results_url: text(2048),
    custom_fields: z.record(z.string().max(200), z.unknown()).nullish().superRefine(checkCustomFields),
    created: text(64).refine((v) => !Number.isNaN(Date.parse(v)), 'is not a date-time'),
    last_updated: text(64).nullish(),
  })
  .superRefine((report, ctx) => {
    for (const level of ['total', 'low', 'middle', 'high'] as const) {
      const passed = report[`${level}_passed`];
      const countValue = report[`${level}_count`];
      if (passed > countValue) {
        ctx.addIssue({ code: 'custom', path: [`${level}_passed`], message: `exceeds ${level}_count (${passed} > ${countValue})` });
      }
    }
  });

export type Report = z.infer<typeof ReportSchema>;

/** The user in NetBox 4.6+'s `request` object: a username, or an object with one. */
const RequestUser = z.union([z.string().max(300), z.looseObject({ username: z.string().max(300).optional() }), z.null()]);

/**
 * Every NetBox envelope from 3.4 to 4.7: `model` (≤ 4.4) and/or `object_type` (≥ 4.4), `username`/`request_id` (≤ 4.6)
 * and/or `request` (≥ 4.6), space or ISO timestamps, extra keys such as `context` (4.4+). The relay needs `event` and `data`.
 */
export const EnvelopeSchema = z.looseObject({
  event: z.string().max(100),
  timestamp: z.string().max(64).nullish(),
  model: z.string().max(200).nullish(),
  object_type: z.string().max(200).nullish(),
  username: z.string().max(300).nullish(),
  request_id: z.string().max(100).nullish(),
  request: z.looseObject({ user: RequestUser.optional() }).nullish(),
  data: z.unknown(),
});

export type Envelope = z.infer<typeof EnvelopeSchema>;

/** `custom_fields` are free-form JSON: bounded at the door, so a deep value is a 422 naming its field, not a stack overflow later. */
const MAX_CUSTOM_FIELD_DEPTH = 32;
/** Characters of one field's value, as JSON, about: strings and keys counted, plus a few per value. */
const MAX_CUSTOM_FIELD_CHARS = 512 * 1024;
const MAX_CUSTOM_FIELDS = 500;

/** Adds an issue on each field of `fields` nested too deep or too large (walked without recursion). */
function checkCustomFields(fields: Record<string, unknown> | null | undefined, ctx: z.RefinementCtx): void {
  if (!fields) return;
  const names = Object.keys(fields);
  if (names.length > MAX_CUSTOM_FIELDS) {
    ctx.addIssue({ code: 'custom', message: `has ${names.length} fields, more than ${MAX_CUSTOM_FIELDS}` });
    return;
  }
  for (const name of names) {
    const problem = measureValue(fields[name]);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
}

/** Why a value is out of bounds, or null: an explicit stack, stopping at the first bound crossed. */
function measureValue(value: unknown): string | null {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  let chars = 0;
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (depth > MAX_CUSTOM_FIELD_DEPTH) return `is nested deeper than ${MAX_CUSTOM_FIELD_DEPTH} levels`;
    chars += typeof v === 'string' ? v.length + 2 : 4;
    const children: unknown[] =
      v === null || typeof v !== 'object' ? [] : Array.isArray(v) ? v : Object.entries(v as Record<string, unknown>).flat();
    // Counted before they are stacked: a million-item list stops here, not after a million pushes.
    chars += children.length;
    if (chars > MAX_CUSTOM_FIELD_CHARS) return `is larger than ${MAX_CUSTOM_FIELD_CHARS} characters as JSON`;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return null;
}

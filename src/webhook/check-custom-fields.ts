import type { z } from 'zod';

/**
 * A report's `custom_fields` are free-form JSON that the relay stores, matches routes on and shows.
 * Bounded here, at the door, so that a 100,000-level value is a 422 naming its field rather than a
 * stack overflow later (JSON.stringify and zod recurse), and a huge one never reaches the store.
 */
const MAX_CUSTOM_FIELD_DEPTH = 32;
/** Characters of one field's value, as JSON, about: strings and keys counted, plus a few per value. */
const MAX_CUSTOM_FIELD_CHARS = 512 * 1024;
const MAX_CUSTOM_FIELDS = 500;

/** Adds an issue on each field of `fields` nested too deep or too large (walked without recursion). */
export function checkCustomFields(fields: Record<string, unknown> | null | undefined, ctx: z.RefinementCtx): void {
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

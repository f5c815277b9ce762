/**
 * Characters that change how text around them reads without being seen: every control character (C0 but tab and line
 * breaks, DEL, C1) and every format character (Cf), which holds the whole bidi set (`\u202egnp.exe` shows as `exe.png`)
 * and the other invisibles, but the zero-width joiner and non-joiner, which Persian, Indic scripts and emoji need.
 * Built from a string: the TypeScript target predates the `v` flag (Node 20).
 */
const INVISIBLE_CONTROLS = new RegExp('[[\\p{Cc}\\p{Cf}]--[\\t\\n\\r\\u200c\\u200d]]', 'gv');
// Most names are printable ASCII, which holds none of them: this test is a fraction of the Unicode scan's cost.
const OUTSIDE_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** Makes untrusted text (NetBox names, error texts) safe to show: each invisible character becomes a visible `[U+202E]`. */
export function neutralizeText(text: string): string {
  if (!OUTSIDE_PRINTABLE_ASCII.test(text)) return text;
  return text.replace(INVISIBLE_CONTROLS, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/**
 * The view with {@link neutralizeText} applied to every string and key in it (plain objects and arrays copied): cheaper
 * than neutralizing every rendered part, since the HTML with its inlined CSS is ten times the view.
 */
export function neutralizeView<T>(view: T): T {
  if (typeof view === 'string') return neutralizeText(view) as T;
  if (Array.isArray(view)) return view.map(neutralizeView) as T;
  if (!isPlainObject(view)) return view;
  const copy: Record<string, unknown> = {};
  // Keys too: a template may show them (`{{@key}}` in an `#each` over an object).
  for (const key of Object.keys(view)) copy[neutralizeText(key)] = neutralizeView(view[key]);
  return copy as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

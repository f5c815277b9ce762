/**
 * Characters that change how text around them reads without being seen: every control character
 * (C0 other than tab, line feed and carriage return, DEL, C1) and every format character (Unicode
 * category Cf), which holds the whole bidi set — the marks U+200E, U+200F and U+061C, the
 * embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069 (`\u202egnp.exe` shows as
 * `exe.png`) — and the other invisibles (U+200B, U+2060–U+2064, U+FEFF, the tag characters). The
 * zero-width joiner and non-joiner (U+200D, U+200C) are kept: Persian, Indic scripts and emoji need them.
 */
// The `v` flag's set difference (Node 20) runs at the speed of a plain class; the TypeScript target predates it.
const INVISIBLE_CONTROLS = new RegExp('[[\\p{Cc}\\p{Cf}]--[\\t\\n\\r\\u200c\\u200d]]', 'gv');
// Most names are printable ASCII, which holds none of them: this test is a fraction of the Unicode scan's cost.
const OUTSIDE_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/**
 * Makes untrusted text (NetBox names, error texts) safe to show: each bidi, format or control
 * character becomes a visible `[U+202E]`, so a reader sees that it was there and the text reads as
 * stored. Tab and line breaks are kept. Pure.
 */
export function neutralizeText(text: string): string {
  if (!OUTSIDE_PRINTABLE_ASCII.test(text)) return text;
  return text.replace(INVISIBLE_CONTROLS, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/**
 * The view with {@link neutralizeText} applied to every string and key in it (plain objects and arrays are
 * copied, other values kept). A template's output holds the view's strings and the template's own text,
 * so neutralising the view once costs its few kilobytes of data rather than every rendered part
 * (the HTML with its inlined CSS is ten times the view). Pure.
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

/**
 * Invisible characters that change how text reads: controls (but tab, line breaks) and format characters (the bidi set:
 * `\u202egnp.exe` shows as `exe.png`), but ZWJ/ZWNJ (Persian, Indic, emoji). A string: the TS target predates `v`.
 */
const INVISIBLE_CONTROLS = new RegExp('[[\\p{Cc}\\p{Cf}]--[\\t\\n\\r\\u200c\\u200d]]', 'gv');
// Most names are printable ASCII, which holds none of them: this test is a fraction of the Unicode scan's cost.
const OUTSIDE_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** Makes untrusted text (NetBox names, error texts) safe to show: each invisible character becomes a visible `[U+202E]`. */
export function neutralizeText(text: string): string {
  if (!OUTSIDE_PRINTABLE_ASCII.test(text)) return text;
  return text.replace(INVISIBLE_CONTROLS, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/** The view with every string and key neutralized: cheaper than the rendered HTML, ten times its size. */
export function neutralizeView<T>(view: T): T {
  if (typeof view === 'string') return neutralizeText(view) as T;
  if (Array.isArray(view)) return view.map(neutralizeView) as T;
  const prototype = view !== null && typeof view === 'object' ? (Object.getPrototypeOf(view) as unknown) : undefined;
  if (prototype !== Object.prototype && prototype !== null) return view;
  const copy: Record<string, unknown> = {};
  // Keys too: a template may show them (`{{@key}}` in an `#each` over an object).
  for (const [key, value] of Object.entries(view as object)) copy[neutralizeText(key)] = neutralizeView(value);
  return copy as T;
}

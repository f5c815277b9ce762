/**
 * Characters that change how text around them reads without being seen: the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069; `\u202egnp.exe` shows as `exe.png`), C0
 * controls other than tab, line feed and carriage return, DEL, and the C1 controls.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are made visible.
const INVISIBLE_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/**
 * Makes untrusted text (NetBox names, error texts) safe to show: each bidi or control character
 * becomes a visible `[U+202E]`, so a reader sees that it was there and the text reads as stored.
 * Tab and line breaks are kept. Pure.
 */
export function neutralizeText(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

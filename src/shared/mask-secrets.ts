/** What a secret becomes. */
export const SECRET_MARK = '[REDACTED]';

/** Shorter values would hide ordinary words (no real secret is that short). */
const MIN_SECRET_CHARS = 4;
const BASE64_CHAR = /[A-Za-z0-9+/=_-]/;
/** Masking can join text into a secret again ("[REDACTED]" next to its tail); it is repeated until nothing changes. */
const MAX_PASSES = 4;

/** Replaces every secret in a text, in each of its forms, with {@link SECRET_MARK}. */
export type SecretMask = (text: string) => string;

/**
 * A server echoes a secret in the form it was sent, so each form is masked: plain, URL-encoded, JSON-escaped, and
 * base64(url) at any alignment (AUTH PLAIN, HTTP Basic), the whole base64 word then.
 */
export function createSecretMask(secrets: readonly (string | undefined)[]): SecretMask {
  const values = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_CHARS))];
  if (values.length === 0) return (text) => text;
  const literals = new Set<string>();
  const cores = new Set<string>();
  const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  for (const value of values) {
    // As text may carry it: itself, URL-encoded (both hex cases, form encoding), JSON-escaped.
    const uri = encodeURIComponent(value);
    const form = new URLSearchParams({ v: value }).toString().slice(2);
    for (const text of [value, uri, lowerHex(uri), form, lowerHex(form), JSON.stringify(value).slice(1, -1)]) literals.add(text);
    // Its bytes from byte k (0–2) in whole 3-byte groups: any base64 holding the secret contains one of these.
    const bytes = Buffer.from(value, 'utf8');
    for (let k = 0; k < 3; k += 1) {
      const whole = bytes.subarray(k, k + Math.floor((bytes.length - k) / 3) * 3);
      if (whole.length >= 3) for (const encoding of ['base64', 'base64url'] as const) cores.add(whole.toString(encoding));
    }
  }
  // Longest first, so a secret that contains another is masked whole. Literals only: no backtracking.
  const all = [...new Set([...literals, ...cores])].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(all.map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  const maskOnce = (text: string): string => {
    const ranges: [number, number][] = [];
    for (const m of text.matchAll(pattern)) {
      let start = m.index;
      let end = start + m[0].length;
      if (cores.has(m[0])) {
        // A secret inside base64 leaves its neighbours' bits in the word around it: the word goes whole.
        while (start > 0 && BASE64_CHAR.test(text[start - 1])) start -= 1;
        while (end < text.length && BASE64_CHAR.test(text[end])) end += 1;
      }
      const last = ranges.at(-1);
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else ranges.push([start, end]);
    }
    // From the end, so that each range's offsets still hold.
    return ranges.reduceRight((out, [start, end]) => out.slice(0, start) + SECRET_MARK + out.slice(end), text);
  };
  return (text) => {
    let out = text;
    for (let pass = 0; pass < MAX_PASSES; pass += 1) {
      const next = maskOnce(out);
      if (next === out) break;
      out = next;
    }
    return out;
  };
}

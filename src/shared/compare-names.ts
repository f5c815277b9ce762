/**
 * The order of names in mails, digests and pages: by their characters, letters' case aside, then as written. The same
 * on every server whatever its LANG (a locale's collation is not), without ICU's collation data in memory.
 */
export function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

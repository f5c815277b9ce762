/** An id as the store gives them (deliveries, waivers): digits only; anything else (a file waiver's `file:<n>`, a typo) names none. */
export function parseStoredId(id: string): number | undefined {
  const n = /^\d{1,15}$/.test(id) ? Number(id) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Python's `round(x, 1)` rounds exact ties (n + 0.25, n + 0.75) half to even, `toFixed` half up: 6.25 is "6.2" vs "6.3". */
function roundHalfEven1(value: number): number {
  const quarters = value * 4;
  if (Number.isInteger(quarters) && !Number.isInteger(value * 2)) {
    const floor = Math.floor(value);
    return value - floor === 0.25 ? floor + 0.2 : floor + 0.8;
  }
  return Number(value.toFixed(1));
}

/** The pass ratio as validity's UI shows it, `round(100 * passed / count, 1)` in Python; null when count is 0. */
export function passPercent(passed: number, count: number): number | null {
  if (count <= 0) return null;
  return roundHalfEven1((100 * passed) / count);
}

/** "62.5%", "100.0%", "0.0%", or "—" when count is 0 (never NaN, Infinity or undefined). */
export function formatPercent(passed: number, count: number): string {
  return formatPercentValue(passPercent(passed, count));
}

/** A percentage already rounded to one decimal as {@link formatPercent} writes it; "—" for null. */
export function formatPercentValue(pct: number | null): string {
  return pct === null ? '—' : `${pct.toFixed(1)}%`;
}

/** The colour band of validity's UI: ≥ 75 green, ≥ 50 yellow, ≥ 25 orange, else red; `none` without results. */
export function bandOf(percent: number | null) {
  if (percent === null) return 'none';
  if (percent >= 75) return 'green';
  if (percent >= 50) return 'yellow';
  if (percent >= 25) return 'orange';
  return 'red';
}

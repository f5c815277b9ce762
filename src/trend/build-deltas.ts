import { COUNT_LINES, passPercent, SEVERITIES, type PassCount, type ReportCounts, type Severity, type SeverityCounts } from '../report';

/** U+2212, as in "−1 failing": a real minus sign reads better than a hyphen in a mail. */
const MINUS = '\u2212';

/** Change of one line (Overall or one severity) against the previous report. */
export type TrendDelta = ReturnType<typeof buildDelta>;

/** Each line of the counts changed by its severity's number (the overall line by their sum). */
function changeLines(counts: ReportCounts, by: Record<Severity, number>, change: (line: PassCount, n: number) => PassCount): ReportCounts {
  const [HIGH, MIDDLE, LOW] = SEVERITIES.map((s) => change(counts[s], by[s]));
  return { overall: change(counts.overall, by.HIGH + by.MIDDLE + by.LOW), HIGH, MIDDLE, LOW };
}

/** Counts without some failing results (as if they had not been evaluated). */
export function withoutFailed(counts: ReportCounts, failed: Record<Severity, number>): ReportCounts {
  return changeLines(counts, failed, (line, n) => ({ ...line, count: line.count - n }));
}

/** Counts with some failing results counted as passed. */
export function addPassed(counts: ReportCounts, extra: Record<Severity, number>): ReportCounts {
  return changeLines(counts, extra, (line, n) => ({ ...line, passed: line.passed + n }));
}

export function buildDeltas(c: ReportCounts, p: ReportCounts): TrendDelta[] {
  return COUNT_LINES.map((line) => {
    const [now, then] = [c[line], p[line]];
    const percents: [number | null, number | null] = [passPercent(now.passed, now.count), passPercent(then.passed, then.count)];
    return buildDelta(line, percents, [now.count - now.passed, then.count - then.passed], [now.count, then.count]);
  });
}

/** One line's change; its direction by the points, or in a devices-only trend by the failing count. */
function buildDelta(
  line: (typeof COUNT_LINES)[number],
  [percent, previousPercent]: [number | null, number | null],
  [failed, previousFailed]: [number, number],
  [count, previousCount]: [number, number],
  devicesOnly = false,
) {
  // Tenths as integers, so 77.8 − 75.3 is 2.5 and not 2.499999.
  const deltaPoints = percent === null || previousPercent === null ? null : Math.round(percent * 10 - previousPercent * 10) / 10;
  const deltaFailed = failed - previousFailed;
  const better = devicesOnly ? -deltaFailed : (deltaPoints ?? 0);
  return {
    name: line === 'overall' ? ('Overall' as const) : line,
    percent,
    previousPercent,
    /** Percentage points, one decimal; null when either side has no results. */
    deltaPoints,
    /** "+2.5 pts", "−3.0 pts", "±0.0 pts", or "—" when not comparable. */
    deltaPointsText: deltaPoints === null ? '—' : `${signOf(deltaPoints)}${Math.abs(deltaPoints).toFixed(1)} pts`,
    failed,
    previousFailed,
    deltaFailed,
    /** Results of this line in each report; in a devices-only trend both are this report's count of those devices (0 when unknown). */
    count,
    previousCount,
    /** "+2 failing", "−1 failing", "±0 failing". */
    deltaFailedText: `${signOf(deltaFailed)}${Math.abs(deltaFailed)} failing`,
    /** By the pass percentage ("same" also when not comparable); in a devices-only trend, by the failing count. */
    direction: better > 0 ? ('better' as const) : better < 0 ? ('worse' as const) : ('same' as const),
  };
}

export function addOverall(lines: SeverityCounts): ReportCounts {
  const sum = (key: keyof PassCount) => SEVERITIES.reduce((n, s) => n + lines[s][key], 0);
  return { ...lines, overall: { passed: sum('passed'), count: sum('count') } };
}

/** A devices-only trend's lines: failing counts against the previous report, today's percentage from `counts`, no points. */
export function buildFailingDeltas(now: Record<Severity, number>, then: Record<Severity, number>, counts: ReportCounts | null) {
  const withTotal = (of: Record<Severity, number>) => ({ overall: of.HIGH + of.MIDDLE + of.LOW, ...of });
  const [failedNow, failedThen] = [withTotal(now), withTotal(then)];
  return COUNT_LINES.map((line) => {
    const { passed, count } = counts?.[line] ?? { passed: 0, count: 0 };
    return buildDelta(line, [passPercent(passed, count), null], [failedNow[line], failedThen[line]], [count, count], true);
  });
}

/** "+", "−" or "±": the sign of a change as the mail writes it. */
export function signOf(n: number): string {
  return n > 0 ? '+' : n < 0 ? MINUS : '±';
}

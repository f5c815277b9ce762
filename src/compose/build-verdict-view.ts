import type { Trend, TrendDelta, Verdict } from '../trend';
import { count } from './build-evaluation-lines';

/** U+2212: a real minus sign, as the trend writes it. */
const MINUS = '\u2212';

/**
 * The trend's verdict as the mail words it (templates/README.md documents the fields): the first line under the
 * banner, the subject's first word and the `X-Compliance-Verdict` header. Decided in trend/ (decideVerdict); nothing here decides again.
 */
export interface VerdictView {
  direction: Verdict;
  word: string;
  scopeChanged: boolean;
  previousReportId: number | null;
  text: string;
  scopeText: string | null;
}

const WORDS: Record<Verdict, string> = { first: 'First', better: 'Better', worse: 'Worse', mixed: 'Mixed', same: 'Same' };

/** The verdict line of a report (or an owner group, or a digest's series) against its previous report. */
export function buildVerdictView(trend: Trend, percentText: string): VerdictView {
  const { verdict, scopeChanged, previous, overall } = trend;
  const base = { direction: verdict, word: WORDS[verdict], scopeChanged, scopeText: null };
  if (!previous || !overall) {
    return {
      ...base,
      previousReportId: null,
      text: `${percentText} passed. This is the first report the relay has seen from this NetBox: there is nothing to compare with yet.`,
    };
  }
  const id = previous.reportId;
  const lead = {
    first: '',
    worse: `Worse than report ${id}`,
    better: `Better than report ${id}`,
    mixed: `Mixed against report ${id}`,
    same: `Same as report ${id}`,
  }[verdict];
  const was = overall.previousPercent === null ? '' : `, was ${overall.previousPercent.toFixed(1)}%`;
  const high = trend.severities.find((d) => d.name === 'HIGH');
  const highClause = high && (high.direction !== 'same' || countNewHigh(trend) > 0) ? `; ${describeHigh(high, trend)}` : '';
  // The deltas are validity's figures: when accepted exceptions are why they moved, the line says so.
  const waived = trend.leftOut.HIGH + trend.leftOut.MIDDLE + trend.leftOut.LOW;
  const waivedClause = waived > 0 ? ` The verdict leaves out ${count(waived, 'accepted exception')}.` : '';
  // An owner group's share: the previous report's ratios over its devices are unknown, its failing results are not.
  const figures = trend.devicesOnly
    ? ` on these devices: ${overall.failed} failing, was ${overall.previousFailed}`
    : `: ${percentText} passed${was} (${overall.deltaPointsText}, ${overall.deltaFailedText})`;
  return {
    ...base,
    previousReportId: id,
    text: `${lead}${figures}${highClause}.${waivedClause}`,
    scopeText: scopeChanged
      ? `The scope changed: report ${id} had ${overall.previousCount} results, this one ${overall.count}, so the percentages compare different tests or devices.`
      : null,
  };
}

/** HIGH results newly failing (the grouped list counts every pair of its tests). */
function countNewHigh(trend: Trend): number {
  return trend.newlyFailingTests.filter((t) => t.severity === 'HIGH').reduce((n, t) => n + t.devices, 0);
}

function describeHigh(high: TrendDelta, trend: Trend): string {
  const newly = countNewHigh(trend);
  const newlyText = newly > 0 ? `, ${newly} newly failing` : '';
  if (trend.devicesOnly) return `HIGH ${high.failed} failing, was ${high.previousFailed}${newlyText}`;
  const now = high.percent === null ? '—' : `${high.percent.toFixed(1)}%`;
  const was = high.previousPercent === null ? '' : `, was ${high.previousPercent.toFixed(1)}%`;
  return `HIGH ${now}${was}${newlyText}`;
}

/** "(−7.4)", "(+2.0)", "(±0.0)": the overall change in points, for the subject. */
export function formatDeltaShort(overall: TrendDelta | null): string {
  if (!overall || overall.deltaPoints === null) return '';
  const d = overall.deltaPoints;
  return ` (${d > 0 ? '+' : d < 0 ? MINUS : '±'}${Math.abs(d).toFixed(1)})`;
}

/** ", 2 accepted": the failing results that are accepted exceptions, counted apart in a subject; "" when none. */
export function formatAccepted(accepted: number): string {
  return accepted > 0 ? `, ${accepted} accepted` : '';
}

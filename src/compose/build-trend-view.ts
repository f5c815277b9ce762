import { buildWebUrl, formatDateTime, formatPercent, formatPercentValue } from '../report';
import { signOf, type FailingPair, type PairStates, type TestPairsGroup, type Trend, type TrendDelta } from '../trend';

// The views below are what the templates read: templates/README.md documents each field.

/** Newly failing / fixed / still failing pairs (or tests, when grouped) a mail lists, at most; the rest is a count. */
export const TREND_LISTED_MAX = 20;

const countUnlisted = (list: readonly unknown[]): number => Math.max(0, list.length - TREND_LISTED_MAX);

/** Devices named per test in a grouped list; the rest is a count. */
const GROUP_DEVICES_SHOWN = 3;

/** Devices (or deleted tests) named in an evaluation line; the rest is a count. */
const EVALUATION_LINE_NAMES = 10;

export interface TrendViewOptions {
  timezone: string;
  basePath: string;
  netboxUrl?: string;
  currentFailingKnown: boolean;
  /** This report's (or owner group's) counts: the verdict line's percentage. */
  passed: number;
  count: number;
  states?: PairStates | null;
}

/** `trend` in the view: the change against the previous report of the same NetBox (by creation time). */
export type TrendView = ReturnType<typeof buildTrendView>;

export function buildTrendView(trend: Trend, options: TrendViewOptions) {
  const previous = trend.previous;
  const when = (iso: string) => formatDateTime(iso, options.timezone);
  // Without NETBOX_URL the mail's one line about that setting says it all: nothing was "not read".
  const failingSetNote =
    !previous || trend.failingSetKnown || options.netboxUrl === undefined
      ? null
      : !options.currentFailingKnown
        ? 'Which devices and tests changed is unknown: the failing results of this report could not be read from NetBox.'
        : previous.pending
          ? `Compared on counts only: the failing results of report ${previous.reportId} were not known yet (its mail was still being prepared).`
          : `Which devices and tests changed is unknown: the failing results of report ${previous.reportId} were not read from NetBox.`;
  return {
    verdict: buildVerdictView(trend, formatPercent(options.passed, options.count)),
    devicesOnly: trend.devicesOnly,
    first: previous === null,
    firstText: previous === null ? FIRST_TEXT : null,
    previous: previous
      ? {
          reportId: previous.reportId,
          created: previous.created,
          createdText: when(previous.created),
          url: buildWebUrl(options.basePath, `/plugins/validity/reports/${previous.reportId}/`, options.netboxUrl),
        }
      : null,
    overall: trend.overall,
    severities: trend.severities,
    failingSetKnown: trend.failingSetKnown,
    failingSetNote,
    arrivedLate: trend.arrivedLate === true,
    arrivalText: trend.arrivedLate
      ? `Arrived late: a newer report of this series was received before it. ${
          previous ? `It is compared with report ${previous.reportId}, created before it` : 'No report was created before it'
        }; the newer report's mail stands as it was sent.`
      : null,
    failingSetChanged: trend.failingSetChanged,
    regression: trend.regression,
    newlyFailing: trend.newlyFailing.slice(0, TREND_LISTED_MAX),
    moreNewlyFailing: countUnlisted(trend.newlyFailing),
    fixed: trend.fixed.slice(0, TREND_LISTED_MAX),
    moreFixed: countUnlisted(trend.fixed),
    stillFailing: trend.stillFailing.slice(0, TREND_LISTED_MAX).map((s) => ({
      device: s.device,
      test: s.test,
      severity: s.severity,
      reports: s.reports,
      sinceText: `failing since report ${s.sinceReportId} / ${when(s.sinceCreated)} (${s.atLeast ? 'at least ' : ''}${s.reports} reports in a row)`,
    })),
    moreStillFailing: countUnlisted(trend.stillFailing),
    newlyFailingTests: trend.newlyFailingTests.slice(0, TREND_LISTED_MAX).map(buildTestGroupView),
    moreNewlyFailingTests: countUnlisted(trend.newlyFailingTests),
    stillFailingTests: trend.stillFailingTests.slice(0, TREND_LISTED_MAX).map(buildTestGroupView),
    moreStillFailingTests: countUnlisted(trend.stillFailingTests),
    fixedTests: trend.fixedTests.slice(0, TREND_LISTED_MAX).map(buildTestGroupView),
    moreFixedTests: countUnlisted(trend.fixedTests),
    ...buildEvaluationLines(trend, options.states ?? null),
  };
}

function buildTestGroupView(group: TestPairsGroup) {
  return {
    test: group.test,
    severity: group.severity,
    devices: group.devices.length,
    firstDevices: group.devices.slice(0, GROUP_DEVICES_SHOWN),
    moreDevices: Math.max(0, group.devices.length - GROUP_DEVICES_SHOWN),
    sinceText:
      group.longestSinceReportId === null
        ? ''
        : `failing since report ${group.longestSinceReportId} (${group.longestReports} reports in a row)`,
  };
}

/** The verdict as the mail words it (first line, subject, X-Compliance-Verdict); decided in trend/, nothing here decides again. */
export type VerdictView = ReturnType<typeof buildVerdictView>;

const FIRST_TEXT = 'This is the first report the relay has seen from this NetBox: there is nothing to compare with yet.';

/** The verdict line of a report (or an owner group, or a digest's series) against its previous report. */
export function buildVerdictView(trend: Trend, percentText: string) {
  const { verdict, scopeChanged, previous, overall } = trend;
  const base = { direction: verdict, word: `${verdict.charAt(0).toUpperCase()}${verdict.slice(1)}`, scopeChanged };
  if (!previous || !overall) {
    return {
      ...base,
      previousReportId: null as number | null,
      text: `${percentText} passed. ${FIRST_TEXT}`,
      scopeText: null as string | null,
    };
  }
  const id = previous.reportId;
  const lead = { first: '', worse: 'Worse than', better: 'Better than', mixed: 'Mixed against', same: 'Same as' }[verdict];
  const was = (percent: number | null) => (percent === null ? '' : `, was ${formatPercentValue(percent)}`);
  const high = trend.severities.find((d) => d.name === 'HIGH');
  // HIGH results newly failing, over every newly failing test (not only those the mail lists).
  const newHigh = trend.newlyFailingTests.filter((t) => t.severity === 'HIGH').reduce((n, t) => n + t.devices.length, 0);
  const highFigures = trend.devicesOnly
    ? `${high?.failed} failing, was ${high?.previousFailed}`
    : `${formatPercentValue(high?.percent ?? null)}${was(high?.previousPercent ?? null)}`;
  const highClause =
    high && (high.direction !== 'same' || newHigh > 0) ? `; HIGH ${highFigures}${newHigh > 0 ? `, ${newHigh} newly failing` : ''}` : '';
  // The deltas are validity's figures: when accepted exceptions are why they moved, the line says so.
  const waived = trend.leftOut.HIGH + trend.leftOut.MIDDLE + trend.leftOut.LOW;
  const waivedClause = waived > 0 ? ` The verdict leaves out ${count(waived, 'accepted exception')}.` : '';
  // An owner group's share: the previous report's ratios over its devices are unknown, its failing results are not.
  const figures = trend.devicesOnly
    ? ` on these devices: ${overall.failed} failing, was ${overall.previousFailed}`
    : `: ${percentText} passed${was(overall.previousPercent)} (${overall.deltaPointsText}, ${overall.deltaFailedText})`;
  return {
    ...base,
    previousReportId: id as number | null,
    text: `${lead} report ${id}${figures}${highClause}.${waivedClause}`,
    scopeText: scopeChanged
      ? `The scope changed: report ${id} had ${overall.previousCount} results, this one ${overall.count}, so the percentages compare different tests or devices.`
      : null,
  };
}

/** " (−7.4)", " (±0.0)": the overall change in points, for the subject. */
export function formatDeltaShort(overall: TrendDelta | null): string {
  if (!overall || overall.deltaPoints === null) return '';
  return ` (${signOf(overall.deltaPoints)}${Math.abs(overall.deltaPoints).toFixed(1)})`;
}

/** ", 2 accepted" in a subject; "" when none. */
export const formatAccepted = (accepted: number): string => (accepted > 0 ? `, ${accepted} accepted` : '');

/** What one of the two reports did not evaluate or could not be told, a line each (null when there is nothing to say). */
function buildEvaluationLines(trend: Trend, reading: PairStates | null) {
  const previousId = trend.previous?.reportId ?? 0;
  const one = (n: number, singular: string, plural: string) => (n === 1 ? singular : plural);
  const unknown: string[] = [];
  const { undeterminedCount: gone, undeterminedBeforeCount: came } = trend;
  if (gone > 0)
    unknown.push(
      `${count(gone, 'result')} that failed in report ${previousId} ${one(gone, 'does', 'do')} not fail now: fixed and not evaluated could not be told apart this time, so neither is listed`,
    );
  if (came > 0)
    unknown.push(
      `${count(came, 'failing result')} did not fail in report ${previousId}: whether ${one(came, 'it', 'they')} passed there or ${one(came, 'was', 'were')} not evaluated could not be told, so ${one(came, 'it is', 'they are')} not called newly failing`,
    );
  const text = unknown.join('; ');
  return {
    notEvaluatedLine: trend.notEvaluated.length
      ? `Not evaluated this time: ${describePairs(trend.notEvaluated, reading)} \u2014 no results in this report.`
      : null,
    notEvaluatedBeforeLine: trend.notEvaluatedBefore.length
      ? `No results in report ${previousId} (new since, or not evaluated there): ${describePairs(trend.notEvaluatedBefore, reading)}.`
      : null,
    undeterminedLine: text
      ? `${text.charAt(0).toUpperCase()}${text.slice(1)} (${reading?.unknownReason ?? 'NetBox was not asked'}).`
      : null,
  };
}

/** "test bgp-up (deleted from NetBox; 4 devices), sw3 (3 tests), sw4 (ntp-synced) and 2 more devices". */
function describePairs(pairs: readonly FailingPair[], reading: PairStates | null): string {
  const byTest = new Map<string, number>();
  const byDevice = new Map<string, string[]>();
  for (const pair of pairs) {
    if (reading?.deletedTests?.includes(pair.test)) byTest.set(pair.test, (byTest.get(pair.test) ?? 0) + 1);
    else byDevice.set(pair.device, [...(byDevice.get(pair.device) ?? []), pair.test]);
  }
  const named = [
    ...[...byTest].map(([test, devices]) => `test ${test} (deleted from NetBox; ${count(devices, 'device')})`),
    ...[...byDevice].map(([device, tests]) => {
      const which = tests.length === 1 ? tests[0] : count(tests.length, 'test');
      return `${device} (${reading?.deletedDevices?.includes(device) ? `deleted from NetBox; ${which}` : which})`;
    }),
  ];
  const shown = named.slice(0, EVALUATION_LINE_NAMES);
  const more = named.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

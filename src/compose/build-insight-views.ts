import type { Enrichment } from '../enrichment';
import { pairKey, type FailingPair, type PairBadge, type PairStates, type TestPairsGroup, type Trend, type TrendDelta } from '../trend';
import { buildWebUrl, formatDateTime, formatPercent, type Severity } from '../report';
import { buildVerdictView, type VerdictView } from './build-verdict-view';
import { buildEvaluationLines, type EvaluationLines } from './build-evaluation-lines';

/** A device name linked to its failing result in NetBox. */
interface ResultLinkView {
  name: string;
  url: string;
  /** The relay dashboard's form to accept this failure as an exception, pre-filled (names only); null without RELAY_URL. */
  acceptUrl: string | null;
  /** Its waiver ended since the previous report: it is back among the failures ("waiver expired"). */
  waiverExpired: boolean;
}

/** One failing test in the mail. */
interface FailingTestView {
  name: string;
  severity: Severity;
  /** Failing results of this test (one per device, or per device pair). */
  failingDevices: number;
  /** The first few devices, each linked to its result page (`/plugins/validity/test-results/<id>/`). */
  devices: ResultLinkView[];
  /** Failing devices not named; 0 when all are. */
  moreDevices: number;
  /** NetBox's results page filtered to this test's failures. */
  resultsUrl: string;
  /**
   * The named devices grouped by their badge: newly failing first, then by streak, longest first. Each
   * device is in exactly one of them; with no trend, one untagged group (`tag` "").
   */
  tagged: TaggedDevicesView[];
  /** This test's newly failing results (all of them, named or not); 0 without a trend. */
  newDevices: number;
}

/** Devices of one failing test that share a badge. */
interface TaggedDevicesView {
  /** "new", "failing since report 41 (3 in a row)", or "" when the trend is unknown. */
  tag: string;
  isNew: boolean;
  devices: ResultLinkView[];
}

/** The failing tests of one severity. */
interface SeverityGroupView {
  severity: Severity;
  failingResults: number;
  tests: FailingTestView[];
}

interface DeviceFailuresView {
  name: string;
  failures: number;
  /** NetBox's results page filtered to this device's failures in this report. */
  url: string;
}

/** The CSV attachment of every failing result (a route's attach_csv). */
interface AttachmentView {
  fileName: string;
  rows: number;
  totalRows: number;
  truncated: boolean;
  /** "The attached CSV lists the first 812 of 10000 failing results: it is capped at 5000000 bytes." or null. */
  note: string | null;
}

/**
 * `enrichment` in the view: what failed, from NetBox's results. When NetBox could not tell,
 * `available` is false, `missingReason` is one line saying why, and the lists are empty.
 */
export interface EnrichmentView {
  available: boolean;
  missingReason: string | null;
  /** Machine code of the reason (NO_NETBOX_URL, NO_TOKEN, AUTH, NOT_FOUND, UNREACHABLE, TIMEOUT, SERVER, PROTOCOL, UNSAFE_URL, OTHER_NETBOX) or null. */
  missingCode: string | null;
  failingResults: number;
  failingTests: number;
  /** HIGH first; only severities with failures. At most `maxFailures` tests in all. */
  groups: SeverityGroupView[];
  /** Failing tests left out by `maxFailures`; 0 when all are listed. */
  moreTests: number;
  /** Where the left-out ones are: NetBox's failed results page of this report. */
  moreTestsUrl: string;
  /** Devices with most failures, those failing more than one test only (at most 10). */
  topDevices: DeviceFailuresView[];
  /** The CSV attachment, or null when none is attached. */
  attachment: AttachmentView | null;
}

/** A (device, test) pair in the trend. */
type PairView = FailingPair;

interface StreakView extends FailingPair {
  reports: number;
  /** "failing since report 10 / 2026-03-01 10:00:00 UTC (3 reports in a row)". */
  sinceText: string;
}

/** One test of a grouped trend list: its device count and the first few devices. */
interface TestGroupView {
  test: string;
  severity: Severity;
  /** Devices of this test in the list (exact). */
  devices: number;
  /** The first few device names, in name order. */
  firstDevices: string[];
  /** Devices not named; 0 when all are. */
  moreDevices: number;
  /** Still failing only: "failing since report 41 (3 reports in a row)", its devices' longest streak; "" for newly failing. */
  sinceText: string;
}

/**
 * `trend` in the view: the change against the previous report of the same NetBox (by creation time).
 * `first` is true (and `firstText` says so) when there is nothing to compare with.
 */
export interface TrendView extends EvaluationLines {
  /** The verdict against the previous report (decided in trend/), as the mail words it. */
  verdict: VerdictView;
  /** An owner group's devices only: compared by failing results (no points; see Trend.devicesOnly). */
  devicesOnly: boolean;
  first: boolean;
  firstText: string | null;
  previous: { reportId: number; created: string; createdText: string; url: string } | null;
  /** Deltas: `deltaPointsText` "+2.5 pts", `deltaFailedText` "−1 failing", `direction` better|worse|same. */
  overall: TrendDelta | null;
  severities: TrendDelta[];
  failingSetKnown: boolean;
  /** Why newly failing / fixed pairs are not listed (a report whose failing results are unknown), or null. */
  failingSetNote: string | null;
  /** A newer report of the series was received before this one: it says so, and with what it is compared. */
  arrivedLate: boolean;
  arrivalText: string | null;
  failingSetChanged: boolean | null;
  regression: boolean;
  newlyFailing: PairView[];
  moreNewlyFailing: number;
  fixed: PairView[];
  moreFixed: number;
  stillFailing: StreakView[];
  moreStillFailing: number;
  /** Newly failing pairs grouped per test, HIGH first (what the mail shows first). */
  newlyFailingTests: TestGroupView[];
  /** Tests with newly failing pairs left out of `newlyFailingTests`. */
  moreNewlyFailingTests: number;
  /** Still-failing pairs grouped per test, HIGH first. */
  stillFailingTests: TestGroupView[];
  moreStillFailingTests: number;
  /** Fixed pairs grouped per test, HIGH first (the mail's compact "Fixed" list). */
  fixedTests: TestGroupView[];
  moreFixedTests: number;
}

export interface EnrichmentViewOptions {
  reportId: number;
  basePath: string;
  netboxUrl?: string;
  failedResultsUrl: string;
  /** Failing tests listed at most (the relay's: MAX_FAILING_TESTS_LISTED). */
  maxFailures: number;
  attachment: AttachmentView | null;
  /** The trend: each listed result carries its badge (new, failing since); absent or null: no badges. */
  trend?: Trend | null;
  /** Pairs (by pairKey) whose waiver ended since the previous report. */
  waiverExpired?: ReadonlySet<string>;
  /** The link to accept a failing (test, device) as an exception; absent: none. */
  acceptUrl?: (pair: { test: string; device: string }) => string;
}

const TOP_DEVICES = 10;

/** Builds `enrichment` for the templates from what NetBox answered. */
export function buildEnrichmentView(enrichment: Enrichment, options: EnrichmentViewOptions): EnrichmentView {
  if (enrichment.status === 'missing') {
    return {
      available: false,
      missingReason: enrichment.reason,
      missingCode: enrichment.code,
      failingResults: 0,
      failingTests: 0,
      groups: [],
      moreTests: 0,
      moreTestsUrl: options.failedResultsUrl,
      topDevices: [],
      attachment: null,
    };
  }
  const web = (pagePath: string) => buildWebUrl(options.basePath, pagePath, options.netboxUrl);
  const filtered = (filter: string) => web(`/plugins/validity/test-results/?report_id=${options.reportId}&${filter}&passed=false`);
  const { summary } = enrichment;
  const listed = summary.tests.slice(0, options.maxFailures);
  const newByTest = countNewByTest(summary.results, options.trend?.badges);
  const groups: SeverityGroupView[] = [];
  for (const test of listed) {
    let group = groups.find((g) => g.severity === test.severity);
    if (!group) {
      group = {
        severity: test.severity,
        failingResults: summary.tests.filter((t) => t.severity === test.severity).reduce((n, t) => n + t.failingDevices, 0),
        tests: [],
      };
      groups.push(group);
    }
    const devices = test.firstResults.map((r) => ({
      name: r.device,
      url: web(`/plugins/validity/test-results/${r.resultId}/`),
      acceptUrl: options.acceptUrl?.({ test: test.name, device: r.device }) ?? null,
      waiverExpired: options.waiverExpired?.has(pairKey({ test: test.name, device: r.device })) ?? false,
    }));
    const badges = options.trend?.badges;
    group.tests.push({
      name: test.name,
      severity: test.severity,
      failingDevices: test.failingDevices,
      devices,
      moreDevices: test.failingDevices - test.firstResults.length,
      resultsUrl: test.testId !== null ? filtered(`test_id=${test.testId}`) : options.failedResultsUrl,
      tagged: tagDevices(test.name, devices, badges, options.trend?.previous?.reportId ?? null),
      newDevices: newByTest.get(test.name) ?? 0,
    });
  }
  return {
    available: true,
    missingReason: null,
    missingCode: null,
    failingResults: summary.results.length,
    failingTests: summary.tests.length,
    groups,
    moreTests: summary.tests.length - listed.length,
    moreTestsUrl: options.failedResultsUrl,
    // A device with a single failure is already named under its test; the list is for the repeat offenders.
    topDevices: summary.devices
      .filter((d) => d.failures > 1)
      .slice(0, TOP_DEVICES)
      .map((d) => ({
        name: d.name,
        failures: d.failures,
        url: d.deviceId !== null ? filtered(`device_id=${d.deviceId}`) : options.failedResultsUrl,
      })),
    attachment: options.attachment,
  };
}

/** Newly failing results per test name. */
function countNewByTest(
  results: readonly Pick<FailingPair, 'device' | 'test'>[],
  badges: ReadonlyMap<string, PairBadge> | undefined,
): Map<string, number> {
  const counts = new Map<string, number>();
  if (!badges) return counts;
  for (const r of results) if (badges.get(pairKey(r))?.kind === 'new') counts.set(r.test, (counts.get(r.test) ?? 0) + 1);
  return counts;
}

/**
 * A test's named devices grouped by badge: new first, then those the previous report did not evaluate or
 * could not be told about, then the longest streak first.
 */
function tagDevices(
  test: string,
  devices: ResultLinkView[],
  badges: ReadonlyMap<string, PairBadge> | undefined,
  previousReportId: number | null,
): TaggedDevicesView[] {
  if (!badges || badges.size === 0) return devices.length ? [{ tag: '', isNew: false, devices }] : [];
  const groups = new Map<string, TaggedDevicesView & { order: number }>();
  for (const device of devices) {
    const badge = badges.get(pairKey({ test, device: device.name }));
    const tag = !badge ? '' : describeBadge(badge, previousReportId);
    const order = !badge ? 0 : badge.kind === 'streak' ? badge.reports : BADGE_ORDER[badge.kind];
    const group = groups.get(tag) ?? { tag, isNew: badge?.kind === 'new', devices: [], order };
    group.devices.push(device);
    groups.set(tag, group);
  }
  return [...groups.values()].sort((a, b) => b.order - a.order).map(({ tag, isNew, devices: named }) => ({ tag, isNew, devices: named }));
}

const BADGE_ORDER: Record<Exclude<PairBadge['kind'], 'streak'>, number> = {
  new: Number.MAX_SAFE_INTEGER,
  unseen: Number.MAX_SAFE_INTEGER - 1,
  unknown: Number.MAX_SAFE_INTEGER - 2,
};

/** "new", "no result in report 41", "not failing in report 41", or the streak. */
function describeBadge(badge: PairBadge, previousReportId: number | null): string {
  if (badge.kind === 'new') return 'new';
  if (badge.kind === 'unseen') return `no result in report ${previousReportId ?? '?'}`;
  if (badge.kind === 'unknown') return `not failing in report ${previousReportId ?? '?'}`;
  return describeStreak(badge);
}

function describeStreak(badge: Extract<PairBadge, { kind: 'streak' }>): string {
  return `failing since report ${badge.sinceReportId} (${badge.atLeast ? 'at least ' : ''}${badge.reports} in a row)`;
}

export interface TrendViewOptions {
  timezone: string;
  basePath: string;
  netboxUrl?: string;
  /** Whether this report's failing results are known (else the note says why pairs are not compared). */
  currentFailingKnown: boolean;
  /** This report's (or owner group's) passed and result counts: the verdict line's percentage. */
  passed: number;
  count: number;
  /** What NetBox said of the pairs that changed (deleted tests and devices, why some could not be told); absent or null: nothing. */
  states?: PairStates | null;
}

/** Builds `trend` for the templates. */
export function buildTrendView(trend: Trend, options: TrendViewOptions): TrendView {
  const previous = trend.previous;
  const when = (iso: string) => formatDateTime(iso, options.timezone);
  let failingSetNote: string | null = null;
  // Without NETBOX_URL the mail's one line about that setting says it all: nothing was "not read".
  if (previous && !trend.failingSetKnown && options.netboxUrl !== undefined) {
    failingSetNote = !options.currentFailingKnown
      ? 'Which devices and tests changed is unknown: the failing results of this report could not be read from NetBox.'
      : previous.pending
        ? `Compared on counts only: the failing results of report ${previous.reportId} were not known yet (its mail was still being prepared).`
        : `Which devices and tests changed is unknown: the failing results of report ${previous.reportId} were not read from NetBox.`;
  }
  return {
    verdict: buildVerdictView(trend, formatPercent(options.passed, options.count)),
    devicesOnly: trend.devicesOnly,
    first: previous === null,
    firstText:
      previous === null ? 'This is the first report the relay has seen from this NetBox: there is nothing to compare with yet.' : null,
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
    newlyFailing: trend.newlyFailing,
    moreNewlyFailing: trend.newlyFailingCount - trend.newlyFailing.length,
    fixed: trend.fixed,
    moreFixed: trend.fixedCount - trend.fixed.length,
    stillFailing: trend.stillFailing.map((s) => ({
      device: s.device,
      test: s.test,
      severity: s.severity,
      reports: s.reports,
      sinceText: `failing since report ${s.sinceReportId} / ${when(s.sinceCreated)} (${s.atLeast ? 'at least ' : ''}${s.reports} reports in a row)`,
    })),
    moreStillFailing: trend.stillFailingCount - trend.stillFailing.length,
    newlyFailingTests: trend.newlyFailingTests.map(buildTestGroupView),
    moreNewlyFailingTests: trend.newlyFailingTestCount - trend.newlyFailingTests.length,
    stillFailingTests: trend.stillFailingTests.map(buildTestGroupView),
    moreStillFailingTests: trend.stillFailingTestCount - trend.stillFailingTests.length,
    fixedTests: trend.fixedTests.map(buildTestGroupView),
    moreFixedTests: trend.fixedTestCount - trend.fixedTests.length,
    ...buildEvaluationLines(trend, options.states ?? null),
  };
}

/** One grouped test as the templates print it. */
function buildTestGroupView(group: TestPairsGroup): TestGroupView {
  return {
    test: group.test,
    severity: group.severity,
    devices: group.devices,
    firstDevices: group.firstDevices,
    moreDevices: group.devices - group.firstDevices.length,
    sinceText:
      group.longestSinceReportId === null
        ? ''
        : `failing since report ${group.longestSinceReportId} (${group.longestReports} reports in a row)`,
  };
}

import type { Enrichment, FailureSummary } from '../enrichment';
import { pairKey, type FailingPair, type PairBadge, type PairStates, type TestPairsGroup, type Trend, type TrendDelta } from '../trend';
import { buildWebUrl, formatDateTime, formatPercent, SEVERITIES, type Severity } from '../report';
import { buildWaiverFormPath } from '../waivers';
import { buildVerdictView, type VerdictView } from './build-verdict-view';
import { buildEvaluationLines, type EvaluationLines } from './build-evaluation-lines';

// The view types below are what the templates read: templates/README.md documents each field.

interface ResultLinkView {
  name: string;
  url: string;
  /** Null without RELAY_URL. */
  acceptUrl: string | null;
  waiverExpired: boolean;
}

interface FailingTestView {
  name: string;
  severity: Severity;
  /** Failing results of this test (one per device, or per device pair). */
  failingDevices: number;
  devices: ResultLinkView[];
  moreDevices: number;
  resultsUrl: string;
  /** The named devices grouped by their badge; each device is in exactly one group. */
  tagged: TaggedDevicesView[];
  newDevices: number;
}

interface TaggedDevicesView {
  tag: string;
  isNew: boolean;
  devices: ResultLinkView[];
}

interface SeverityGroupView {
  severity: Severity;
  failingResults: number;
  tests: FailingTestView[];
}

interface AttachmentView {
  fileName: string;
  rows: number;
  totalRows: number;
  truncated: boolean;
  note: string | null;
}

/** `enrichment` in the view: what failed, from NetBox's results; when NetBox could not tell, `available` is false and the lists are empty. */
export interface EnrichmentView {
  available: boolean;
  missingReason: string | null;
  missingCode: string | null;
  failingResults: number;
  failingTests: number;
  /** HIGH first; only severities with failures. At most `maxFailures` tests in all. */
  groups: SeverityGroupView[];
  moreTests: number;
  moreTestsUrl: string;
  topDevices: { name: string; failures: number; url: string }[];
  attachment: AttachmentView | null;
}

type StreakView = FailingPair & { reports: number; sinceText: string };

type TestGroupView = Pick<TestPairsGroup, 'test' | 'severity' | 'devices' | 'firstDevices'> & { moreDevices: number; sinceText: string };

/** `trend` in the view: the change against the previous report of the same NetBox (by creation time). */
export interface TrendView extends EvaluationLines {
  /** Decided in trend/; this only words it. */
  verdict: VerdictView;
  devicesOnly: boolean;
  first: boolean;
  firstText: string | null;
  previous: { reportId: number; created: string; createdText: string; url: string } | null;
  overall: TrendDelta | null;
  severities: TrendDelta[];
  failingSetKnown: boolean;
  failingSetNote: string | null;
  arrivedLate: boolean;
  arrivalText: string | null;
  failingSetChanged: boolean | null;
  regression: boolean;
  newlyFailing: FailingPair[];
  moreNewlyFailing: number;
  fixed: FailingPair[];
  moreFixed: number;
  stillFailing: StreakView[];
  moreStillFailing: number;
  newlyFailingTests: TestGroupView[];
  moreNewlyFailingTests: number;
  stillFailingTests: TestGroupView[];
  moreStillFailingTests: number;
  fixedTests: TestGroupView[];
  moreFixedTests: number;
}

export interface EnrichmentViewOptions {
  reportId: number;
  basePath: string;
  netboxUrl?: string;
  failedResultsUrl: string;
  maxFailures: number;
  attachment: AttachmentView | null;
  /** Each listed result carries its badge (new, failing since). */
  trend?: Trend | null;
  /** Pairs (by pairKey) whose waiver ended since the previous report. */
  waiverExpired?: ReadonlySet<string>;
  /** RELAY_URL (no trailing `/`) and the report's source: each listed result links to the dashboard's pre-filled waiver form. */
  waiverForm?: { relayUrl: string; source: string };
}

const TOP_DEVICES = 10;

/** Builds `enrichment` for the templates. */
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
  const buildTest = (test: FailureSummary['tests'][number]): FailingTestView => {
    const devices = test.firstResults.map((r) => ({
      name: r.device,
      url: web(`/plugins/validity/test-results/${r.resultId}/`),
      acceptUrl: options.waiverForm
        ? `${options.waiverForm.relayUrl}${buildWaiverFormPath({ source: options.waiverForm.source, test: test.name, device: r.device })}`
        : null,
      waiverExpired: options.waiverExpired?.has(pairKey({ test: test.name, device: r.device })) ?? false,
    }));
    return {
      name: test.name,
      severity: test.severity,
      failingDevices: test.failingDevices,
      devices,
      moreDevices: test.failingDevices - test.firstResults.length,
      resultsUrl: test.testId !== null ? filtered(`test_id=${test.testId}`) : options.failedResultsUrl,
      tagged: tagDevices(test.name, devices, options.trend?.badges, options.trend?.previous?.reportId ?? null),
      newDevices: newByTest.get(test.name) ?? 0,
    };
  };
  // summary.tests is HIGH first, so the groups are in SEVERITIES' order.
  const groups = SEVERITIES.map((severity) => ({
    severity,
    failingResults: summary.tests.filter((t) => t.severity === severity).reduce((n, t) => n + t.failingDevices, 0),
    tests: listed.filter((t) => t.severity === severity).map(buildTest),
  })).filter((group) => group.tests.length > 0);
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
  return `failing since report ${badge.sinceReportId} (${badge.atLeast ? 'at least ' : ''}${badge.reports} in a row)`;
}

export interface TrendViewOptions {
  timezone: string;
  basePath: string;
  netboxUrl?: string;
  /** Else the note says why pairs are not compared. */
  currentFailingKnown: boolean;
  /** This report's (or owner group's) counts: the verdict line's percentage. */
  passed: number;
  count: number;
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

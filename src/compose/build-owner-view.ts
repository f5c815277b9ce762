import type { MailAttachment } from '../mail';
import type { OwnerGroupPlan } from '../store';
import type { ReportDelivery } from '../webhook';
import { buildReportView, type OwnersView, type ReportView } from './build-report-view';
import { buildSectionOf, type ReportInsights } from './create-report-insights';
import { buildTrendOfDevices } from '../trend';
import { keepNamedWaivers } from './build-waivers-view';
import { buildTrendView } from './build-insight-views';
import { countPerSeverity, findNetboxBasePath, type SeverityCounts } from '../report';
import type { FailingResult } from '../enrichment';

/** Names of a group's devices listed in the mail; the rest are counted. */
const MAX_LISTED_DEVICES = 20;

/**
 * The view and attachments of one owner group's mail: the failing results of its devices only, the
 * pass ratios per severity over its own devices (counted when the plan was made) and the report's
 * totals beside them, and its own trend: verdict, newly failing, fixed and streaks over its devices
 * (see buildDevicesTrend), which the subject, first line and X-Compliance-Verdict read.
 */
export function buildOwnerGroupView(input: {
  view: ReportView;
  delivery: ReportDelivery;
  group: OwnerGroupPlan;
  insights?: Pick<ReportInsights, 'attachments' | 'enrichment' | 'section' | 'comparison'> &
    Partial<Pick<ReportInsights, 'states' | 'failures'>>;
  netboxUrl?: string;
  timezone: string;
  sourceName?: string;
}): { view: ReportView; attachments: MailAttachment[] | undefined } {
  const { view, group } = input;
  const fixed = group.fixedDevices ?? [];
  const owners: OwnersView = {
    key: group.key,
    why: group.why,
    note: group.note,
    whole: group.whole,
    devices: group.devices.slice(0, MAX_LISTED_DEVICES),
    moreDevices: Math.max(0, group.devices.length - MAX_LISTED_DEVICES),
    fixedDevices: fixed.slice(0, MAX_LISTED_DEVICES),
    moreFixedDevices: Math.max(0, fixed.length - MAX_LISTED_DEVICES),
    deviceCount: group.ownedDevices ?? group.devices.length + fixed.length,
    ownRatios: !group.whole && group.counts !== null,
    countsMissing: group.counts === null ? (group.countsMissing ?? 'NetBox could not count its results') : null,
    owned: !group.whole && group.counts !== null && group.ownedDevices != null,
    report: { overall: view.overall, severities: view.severities },
  };
  if (group.whole) return { view: { ...view, owners }, attachments: input.insights?.attachments };
  const ids = new Set(group.deviceIds);
  const names = new Set(group.devices);
  const keep = (r: FailingResult) => (r.deviceId !== null ? ids.has(r.deviceId) : names.has(r.device));
  const section = input.insights && buildSectionOf(input.insights, keep);
  const delivery = group.counts ? withCounts(input.delivery, group.counts, owners.deviceCount) : input.delivery;
  // Its trend is over its failing and its fixed devices, so their fixes count.
  const comparison = input.insights?.comparison;
  const trend = comparison ? buildTrendOfDevices(comparison, new Set([...group.devices, ...fixed]), group.counts) : null;
  const own = buildReportView(delivery, {
    netboxUrl: input.netboxUrl,
    timezone: input.timezone,
    enrichment: section?.enrichment ?? view.enrichment,
    trend: trend
      ? buildTrendView(trend, {
          timezone: input.timezone,
          basePath: findNetboxBasePath(delivery.report.url),
          netboxUrl: input.netboxUrl,
          currentFailingKnown: true,
          passed: delivery.counts.overall.passed,
          count: delivery.counts.overall.count,
          states: input.insights?.states,
        })
      : null,
    sourceName: input.sourceName,
    // Its failures are its own, without the accepted exceptions; only a HIGH failure hidden on several devices is named.
    waivers: keepNamedWaivers(view.waivers),
    // Uncounted, its subject and headers name its own failures, never the report's figures as its own.
    uncountedFailed: group.counts === null ? countPerSeverity(input.insights?.failures?.filter(keep) ?? []) : undefined,
  });
  return { view: { ...own, owners }, attachments: section?.attachments };
}

/** The report with the group's counts in place of the report's: the ratios (and subject) are the group's. */
function withCounts(delivery: ReportDelivery, c: SeverityCounts, deviceCount: number): ReportDelivery {
  const sum = (key: 'passed' | 'count') => c.HIGH[key] + c.MIDDLE[key] + c.LOW[key];
  return {
    ...delivery,
    report: { ...delivery.report, device_count: deviceCount },
    counts: { ...c, overall: { passed: sum('passed'), count: sum('count') } },
  };
}

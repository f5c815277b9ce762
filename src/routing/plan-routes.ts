import type { NetboxDevice, NetboxRef } from '../netbox';
import { passPercent, SEVERITIES, type PassCount, type ReportCounts } from '../report';
import type { NewRouteMail } from '../store';
import type { Trend } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { Condition, Route, RouteSeverity } from './routes-schema';

/** What routes match on, from one report (its trend, when known, is read beside it). */
export interface ReportFacts {
  reportId: number;
  /** ISO completion time: the clock `repeat_after` is measured on. */
  completedAt: string;
  counts: ReportCounts;
  customFields: Record<string, unknown>;
  source: SourceFacts;
  /** The failing devices with NetBox's attributes, for `device` conditions; absent when not known (no NetBox, or it could not say). */
  devices?: readonly NetboxDevice[];
  /** While a route's scope is worked out: the one device a `device` condition looks at. */
  focus?: NetboxDevice;
}

export type SourceFacts = { name: string; tags: Readonly<Record<string, string>> };

export function buildReportFacts(delivery: ReportDelivery, source: SourceFacts): ReportFacts {
  const r = delivery.report;
  return { reportId: r.id, completedAt: delivery.completedAt, counts: delivery.counts, customFields: r.custom_fields ?? {}, source };
}

const failedOf = (line: PassCount) => line.count - line.passed;

/** A severity's (or the overall) failed results and pass percentage as NetBox shows it (null when nothing was counted). */
function readRatio(facts: ReportFacts, severity: RouteSeverity): { failed: number; percent: number | null } {
  const line = facts.counts[severity];
  return { failed: failedOf(line), percent: passPercent(line.passed, line.count) };
}

/** The same in the previous report, from the trend's deltas (validity's figures); null without a previous report. */
function readPreviousRatio(trend: Trend | null, severity: RouteSeverity): { failed: number; percent: number | null } | null {
  const delta = severity === 'overall' ? trend?.overall : trend?.severities.find((d) => d.name === severity);
  return delta ? { failed: delta.previousFailed, percent: delta.previousPercent } : null;
}

/** Pairs failing now that did not before; without the failing pairs, how many more results failed. Null without a previous report. */
function countNewlyFailing(facts: ReportFacts, trend: Trend | null, severity: RouteSeverity): number | null {
  if (!trend?.previous) return null;
  if (trend.failingSetKnown) return trend.newlyFailing.filter((p) => severity === 'overall' || p.severity === severity).length;
  const severities = severity === 'overall' ? SEVERITIES : [severity];
  const grown = (s: RouteSeverity) => Math.max(0, readRatio(facts, s).failed - (readPreviousRatio(trend, s)?.failed ?? 0));
  return severities.map(grown).reduce((sum, n) => sum + n, 0);
}

export const hasFailures = (facts: ReportFacts): boolean => failedOf(facts.counts.overall) > 0;

/** Something failed that is not an accepted exception: what on-change's first report and reminders ask. */
function hasUnwaivedFailures(facts: ReportFacts, trend: Trend | null): boolean {
  const waived = trend ? trend.leftOut.HIGH + trend.leftOut.MIDDLE + trend.leftOut.LOW : 0;
  return failedOf(facts.counts.overall) > waived;
}

/**
 * A route's decision as recorded (`reason`: what the deliveries listing shows). `devices`: the failing device ids its `device`
 * conditions select, its mail holding only their failures; absent: the whole report.
 */
export type RouteDecision = Omit<NewRouteMail, 'ownerGroup'> & { devices?: number[] };

/**
 * Like Alertmanager: the first matching route, and later ones only while matching routes say `continue: true`. Every route
 * gets a decision, so the listing can say why it did not mail. `lastSent`: completion time of a route's last mailed report.
 */
export function planRoutes(
  routes: readonly Route[],
  facts: ReportFacts,
  trend: Trend | null,
  lastSent: (route: string) => string | null,
): RouteDecision[] {
  let stoppedBy: string | undefined;
  return routes.map((route, position) => {
    const base = { route: route.name, position, reminder: false };
    const matched = !route.match || matchCondition(route.match, facts, trend);
    // A digest route never mails a report on its own nor stops the chain: it only says whether the report goes into its digest.
    if (route.digest)
      return {
        ...base,
        outcome: 'skipped',
        reason: matched ? `matched: goes into the digest (${route.digest.schedule})` : 'not matched (digest route)',
      };
    if (stoppedBy !== undefined) return { ...base, outcome: 'skipped', reason: `not reached: route ${stoppedBy} matched without continue` };
    if (!matched) return { ...base, outcome: 'skipped', reason: 'not matched' };
    if (!route.continue) stoppedBy = route.name;
    const devices = route.match && facts.devices && hasDeviceCondition(route.match) ? selectDevices(route.match, facts, trend) : undefined;
    return { ...base, ...decideNotify(route, facts, trend, lastSent(route.name)), ...(devices ? { devices } : {}) };
  });
}

export function matchCondition(condition: Condition, facts: ReportFacts, trend: Trend | null): boolean {
  if (condition.all) return condition.all.every((c) => matchCondition(c, facts, trend));
  if (condition.any) return condition.any.some((c) => matchCondition(c, facts, trend));
  if (condition.failed) return readRatio(facts, condition.failed.severity).failed > condition.failed.above;
  if (condition.pass_percent) {
    const pct = readRatio(facts, condition.pass_percent.severity).percent;
    // A severity with no results has no percentage: it is not "below" anything.
    return pct !== null && pct < condition.pass_percent.below;
  }
  if (condition.regression) {
    const r = condition.regression;
    const before = readPreviousRatio(trend, r.severity)?.percent ?? null;
    const now = readRatio(facts, r.severity).percent;
    if (r.drop_above !== undefined && before !== null && now !== null && before - now > r.drop_above) return true;
    return r.newly_failing && (countNewlyFailing(facts, trend, r.severity) ?? 0) > 0;
  }
  if (condition.device) {
    if (facts.focus) return matchDevice(condition.device, facts.focus);
    // Nothing failed: no failing device to match. Unknown devices (no NetBox, or it is down): the condition holds, so an
    // outage never loses a page.
    if (!hasFailures(facts)) return false;
    return facts.devices === undefined || facts.devices.some((d) => matchDevice(condition.device!, d));
  }
  const { source } = facts;
  if (condition.source) return condition.source.includes(source.name);
  if (condition.source_tags) return Object.entries(condition.source_tags).every(([tag, value]) => source.tags[tag] === value);
  if (condition.custom_field) {
    const c = condition.custom_field;
    const has = Object.prototype.hasOwnProperty.call(facts.customFields, c.name);
    const value = has ? facts.customFields[c.name] : undefined;
    if (c.present !== undefined) return c.present === (has && value !== null && value !== '');
    return c.in ? c.in.some((expected) => sameScalar(value, expected)) : sameScalar(value, c.equals);
  }
  return false;
}

/** True when the device has every attribute the condition names (a list: any of its values; tags: each one). */
function matchDevice(condition: NonNullable<Condition['device']>, device: NetboxDevice): boolean {
  const named = (ref: NetboxRef | null, value: string) => ref !== null && (value === ref.slug || value === ref.name);
  const attributes = ['site', 'tenant', 'role', 'platform'] as const;
  return (
    attributes.every((a) => !condition[a] || condition[a].some((v) => named(device[a], v))) &&
    (condition.tags ?? []).every((t) => device.tags.some((tag) => named(tag, t)))
  );
}

/** Whether a condition looks at the failing devices (`device:`, alone or nested): such a route needs NetBox's devices. */
export function hasDeviceCondition(condition: Condition): boolean {
  if (condition.device) return true;
  return [...(condition.all ?? []), ...(condition.any ?? [])].some(hasDeviceCondition);
}

/** The failing devices for which the route's condition holds, each looked at alone. */
function selectDevices(condition: Condition, facts: ReportFacts, trend: Trend | null): number[] {
  return (facts.devices ?? []).filter((focus) => matchCondition(condition, { ...facts, focus }, trend)).map((d) => d.id);
}

/** Custom field values compared as NetBox stores them; a select field may be an object with `value`. */
function sameScalar(actual: unknown, expected: unknown): boolean {
  if (actual !== null && typeof actual === 'object' && 'value' in actual) actual = actual.value;
  if (Array.isArray(actual)) return actual.some((a) => sameScalar(a, expected));
  if (actual === expected) return true;
  return actual !== undefined && actual !== null && expected !== null && sameText(actual, expected);
}

/** A number or boolean field matches its text in the routes file (`3` and `"3"`). */
function sameText(actual: unknown, expected: unknown): boolean {
  return String(actual) === String(expected);
}

/** The notify policy of a matched route: send now, or hold back and say why. */
function decideNotify(route: Route, facts: ReportFacts, trend: Trend | null, lastSentCompletedAt: string | null) {
  const send = (reason: string, reminder = false) => ({ outcome: 'send' as const, reason, reminder });
  const hold = (reason: string) => ({ outcome: 'suppressed' as const, reason, reminder: false });
  if (route.notify === 'always') return send('matched (notify: always)');
  if (route.notify === 'on-failure') {
    // Accepted exceptions are not failures a route asked to hear about.
    if (hasUnwaivedFailures(facts, trend)) return send('matched and something failed (notify: on-failure)');
    return hold(hasFailures(facts) ? 'every failure an accepted exception (notify: on-failure)' : 'every test passed (notify: on-failure)');
  }
  const change = describeChange(facts, trend);
  if (change.changed) return send(`matched; ${change.why} (notify: on-change)`);
  // Accepted exceptions alone are not a reason to remind anyone.
  if (route.repeat_after !== undefined && hasUnwaivedFailures(facts, trend)) {
    const last = lastSentCompletedAt === null ? NaN : Date.parse(lastSentCompletedAt);
    const now = Date.parse(facts.completedAt);
    if (Number.isNaN(last) || now - last >= route.repeat_after) {
      const since = Number.isNaN(last) ? 'never mailed on this route' : `last mailed for a report completed ${lastSentCompletedAt}`;
      return send(`reminder: ${change.why}, ${since} (repeat_after)`, true);
    }
  }
  return hold(`${change.why} (notify: on-change)`);
}

/** Changed since the previous report: by the failing pairs when known, else by each severity's failed count (blind to swaps). */
function describeChange(facts: ReportFacts, trend: Trend | null): { changed: boolean; why: string } {
  const previous = trend?.previous;
  if (!previous) {
    if (!hasFailures(facts)) return { changed: false, why: 'first report, nothing failed' };
    if (!hasUnwaivedFailures(facts, trend)) return { changed: false, why: 'first report, every failure an accepted exception' };
    return { changed: true, why: 'first report, with failures' };
  }
  if (trend.failingSetKnown) {
    return trend.failingSetChanged
      ? { changed: true, why: `failing pairs changed since report ${previous.reportId}` }
      : { changed: false, why: `same failing pairs as report ${previous.reportId}` };
  }
  const failed = (s: (typeof SEVERITIES)[number]) => [readPreviousRatio(trend, s)!.failed, readRatio(facts, s).failed];
  const changed = SEVERITIES.filter((s) => failed(s)[0] !== failed(s)[1]);
  if (changed.length === 0)
    return { changed: false, why: `same failed counts per severity as report ${previous.reportId} (failing pairs unknown)` };
  const counts = changed.map((s) => `${s} ${failed(s).join('→')}`).join(', ');
  return { changed: true, why: `failed counts changed since report ${previous.reportId} (${counts})` };
}

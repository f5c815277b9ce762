import type { OwnerDirectory, OwnerLookup, ResultCounts } from '../enrichment';
import type { OwnerObject } from '../netbox';
import type { DeliveryRecord, NewRouteMail, OwnerGroupPlan, Store } from '../store';
import { countPerSeverity, SEVERITIES, type Severity } from '../report';
import type { FailingResult, Trend } from '../trend';
import type { ReportDelivery } from '../webhook';
import { buildOwnerGroups, UNOWNED_GROUP_KEY } from './build-owner-groups';
import { buildReportFacts, hasDeviceCondition, hasFailures, planRoutes, type RouteDecision, type SourceFacts } from './plan-routes';
import type { Route } from './routes-schema';
import type { Logger } from '../shared';
import { compareNames } from '../shared';

/** What routes decide on: the report, its recorded trend, and what NetBox said of its failing results and their owners. */
export interface PlannedReport {
  delivery: DeliveryRecord & ReportDelivery;
  trend: Trend | null;
  /** Null when NetBox could not provide them; `failuresMissing` says why. */
  failures: FailingResult[] | null;
  failuresMissing: { code: string; reason: string } | null;
  owners: OwnerDirectory | null;
}

/** What each route does with a delivery (a route mailing NetBox's contacts: one row per owner group). */
export type RoutePlanner = (composed: PlannedReport) => Promise<NewRouteMail[]>;

/**
 * Evaluates the routes on a report's facts and recorded trend; `repeat_after` reads the recorded route mails, so replicas agree.
 * Owner groups are split here, once: the plan is recorded, and a retry sends it as it is, never asking NetBox again.
 */
export function createRoutePlanner(options: {
  routes: readonly Route[];
  store: Pick<Store, 'lastRouteMailCompletedAt'>;
  /** The configured NetBox sources, for `source` and `source_tags` conditions (a source no longer configured has no tags). */
  sources?: readonly SourceFacts[];
  /** Where a route by owner's fallbacks, refused contacts and uncounted groups are logged and counted; absent: nowhere (a preview). */
  logger?: Logger;
  metrics?: {
    recordOwnerFallback(code: string, source: string): void;
    recordOwnerGroupsUncounted(code: string, groups: number, source: string): void;
  };
}): RoutePlanner {
  const tags = new Map((options.sources ?? []).map((s) => [s.name, s.tags]));
  const needsOwners = options.routes.some((r) => r.owners !== undefined);
  const needsDevices = needsOwners || options.routes.some((r) => r.match !== undefined && hasDeviceCondition(r.match));
  const queries = options.routes.flatMap((r) => (r.owners ? [{ role: r.owners.role, on: r.owners.on, priority: r.owners.priority }] : []));
  return async (composed) => {
    const { delivery } = composed;
    const facts = buildReportFacts(delivery, { name: delivery.source, tags: tags.get(delivery.source) ?? {} });
    const lastSent = new Map<string, string | null>();
    for (const route of options.routes)
      if (route.repeat_after !== undefined) lastSent.set(route.name, await options.store.lastRouteMailCompletedAt(route.name, delivery.id));
    const failingIds = new Set((composed.failures ?? []).flatMap((r) => (r.ids.device === null ? [] : [r.ids.device])));
    // NetBox's failing (and, for routes by owner, fixed) devices and their owners' contacts, in one bounded, cached look-up.
    const ids = new Set([...failingIds, ...(needsOwners ? listFixedDevices(composed).map((d) => d.id) : [])]);
    const asked = needsDevices && composed.failures && composed.owners && ids.size > 0;
    const lookup = asked ? await composed.owners!.lookup([...ids], queries) : undefined;
    if (lookup?.status === 'ok') {
      // `device` conditions look at the failing devices; the fixed ones were looked up for their owners only.
      if (failingIds.size > 0) facts.devices = lookup.devices.filter((d) => failingIds.has(d.id));
    } else if (lookup) options.metrics?.recordOwnerFallback(lookup.code, delivery.source);
    else if (needsOwners && composed.failures === null && hasFailures(facts)) {
      // The failing results themselves could not be read: nobody can say who owns what.
      options.metrics?.recordOwnerFallback(composed.failuresMissing?.code ?? 'NO_RESULTS', delivery.source);
    }
    const decisions = planRoutes(options.routes, facts, composed.trend, (name) => lastSent.get(name) ?? null);
    const plan: NewRouteMail[] = [];
    for (const decision of decisions) {
      const route = options.routes[decision.position];
      if (decision.outcome !== 'send') plan.push(decision);
      else if (route.owners) plan.push(...(await splitByOwner(route, decision, composed, lookup, options)));
      else if (decision.devices) plan.push(await scopeToDevices(route, decision, composed));
      else if (route.match && hasDeviceCondition(route.match) && hasFailures(facts) && !facts.devices)
        plan.push(unscoped(route, decision, composed, lookup));
      else plan.push(decision);
    }
    return plan;
  };
}

/**
 * One route's mail split by owner, each group with its devices' failures and counts; the whole report to the fallback when
 * nothing failed or nobody can say who owns what (the mail says so).
 */
async function splitByOwner(
  route: Route,
  decision: RouteDecision,
  composed: PlannedReport,
  lookup: OwnerLookup | undefined,
  hooks: Parameters<typeof createRoutePlanner>[0],
): Promise<NewRouteMail[]> {
  const spec = route.owners!;
  const whole = (why: string, note: string | null) =>
    wholeReport(decision, `${note ? 'owners unknown' : 'nothing failed'}: whole report to the fallback`, {
      route: route.name,
      to: spec.fallback,
      why,
      note,
    });
  const failures = composed.failures;
  // A route narrowed by a device condition selects failing devices; its groups' fixes are those of their failing devices.
  const fixed = decision.devices ? [] : listFixedDevices(composed);
  if (failures !== null && failures.length === 0 && (fixed.length === 0 || lookup?.status !== 'ok'))
    return [whole("nothing failed: the whole report goes to this route's fallback", null)];
  if (!failures || lookup?.status !== 'ok') {
    const cause = !failures
      ? (composed.failuresMissing?.reason ?? 'the failing results could not be read from NetBox')
      : lookup?.status === 'missing'
        ? lookup.reason
        : 'the relay has no NetBox URL and token for this source';
    return [
      whole("you are this route's fallback", `NetBox could not say who owns the failing devices (${cause}), so this is the whole report.`),
    ];
  }
  const scope = decision.devices ? new Set(decision.devices) : null;
  const scoped = scope ? failures.filter((r) => r.ids.device !== null && scope.has(r.ids.device)) : failures;
  const split = buildOwnerGroups(route.name, spec, scoped, lookup.devices, lookup.contacts, fixed);
  // On an on-failure route, a group whose devices fail nothing now has nothing to be told.
  const groups = split.groups.filter((g) => route.notify !== 'on-failure' || g.devices.length > 0);
  if (split.refused.length > 0 && groups.some((g) => g.key === UNOWNED_GROUP_KEY))
    hooks.logger?.warn(
      { route: route.name, refused: split.refused },
      `route ${route.name}: NetBox names contacts the route may not mail; their failures go to its fallback`,
    );
  if (groups.length === 0) return [];
  // Every group is counted from two bulk reads (each owner's devices, the report's results per device): no request per group.
  const objectsOf = (g: OwnerGroupPlan) => split.objects.get(g.key) ?? [];
  const objects = scope ? [] : groups.flatMap(objectsOf);
  const owned = objects.length > 0 ? await composed.owners!.ownedDevices(objects) : null;
  const results = await composed.owners!.countResults();
  const plan: NewRouteMail[] = [];
  const uncounted = new Map<string, { groups: number; reason: string }>();
  for (const g of groups) {
    // A route narrowed by a device condition knows only its failing devices: its ratios are theirs.
    const { missing, ...counted } = countGroup(g, scope ? null : owned, objectsOf(g), failures, results);
    if (missing) uncounted.set(missing.code, { groups: (uncounted.get(missing.code)?.groups ?? 0) + 1, reason: missing.reason });
    const group = { ...g, ...counted, ...(missing ? { countsMissing: missing.reason } : {}) };
    plan.push({ ...decision, route: `${route.name}~${g.key}`, reason: `${decision.reason}; ${g.why}`, ownerGroup: group });
  }
  const { source } = composed.delivery;
  for (const [code, { groups, reason }] of uncounted) {
    hooks.logger?.warn(
      { source, route: route.name, groups, code, reason },
      `route ${route.name}: ${groups} owner group(s) without counts of their own (${reason}); their mails say so`,
    );
    hooks.metrics?.recordOwnerGroupsUncounted(code, groups, source);
  }
  return plan;
}

/**
 * A group's ratios over every device it owns (a site's passing switches count too), else over its failing and fixed devices;
 * null counts, with why, when NetBox could not give the results.
 */
function countGroup(
  g: OwnerGroupPlan,
  owned: Map<string, number[]> | null,
  objects: readonly OwnerObject[],
  failures: readonly FailingResult[],
  results: ResultCounts,
): Pick<OwnerGroupPlan, 'counts' | 'ownedDevices'> & { missing?: { code: string; reason: string } } {
  if (results.status === 'missing') return { counts: null, ownedDevices: null, missing: results };
  const ownedIds = owned && objects.length > 0 ? objects.flatMap((o) => owned.get(`${o.type}:${o.id}`) ?? []) : null;
  const ids = new Set([...(ownedIds ?? []), ...g.deviceIds]);
  // A failing device without its NetBox id cannot be counted: the group's ratios would leave it out.
  if (ids.size === 0 || (ownedIds === null && g.devices.length !== g.deviceIds.length - (g.fixedDevices?.length ?? 0)))
    return {
      counts: null,
      ownedDevices: null,
      missing: { code: 'NO_DEVICE_IDS', reason: 'NetBox gave some of its failing results without a device id' },
    };
  return { counts: sumResults(results.perDevice, ids, failures), ownedDevices: ownedIds ? ids.size : null };
}

/** Results of these devices per severity, from the report's results per device; passed = counted − failed (waived ones pass). */
function sumResults(perDevice: Map<number, Record<Severity, number>>, ids: ReadonlySet<number>, failures: readonly FailingResult[]) {
  const failed = countPerSeverity(failures.filter((r) => r.ids.device !== null && ids.has(r.ids.device)));
  const counts = { HIGH: { passed: 0, count: 0 }, MIDDLE: { passed: 0, count: 0 }, LOW: { passed: 0, count: 0 } };
  for (const id of ids) {
    const device = perDevice.get(id);
    if (device) for (const severity of SEVERITIES) counts[severity].count += device[severity];
  }
  for (const severity of SEVERITIES) counts[severity].passed = Math.max(0, counts[severity].count - failed[severity]);
  return counts;
}

/** A route whose `device` conditions select some failing devices: its one mail holds only theirs (and their counts). */
async function scopeToDevices(route: Route, decision: RouteDecision, composed: PlannedReport): Promise<NewRouteMail> {
  const ids = new Set(decision.devices);
  const failures = (composed.failures ?? []).filter((r) => r.ids.device !== null && ids.has(r.ids.device));
  const deviceIds = [...ids].sort((a, b) => a - b);
  const results = deviceIds.length > 0 && composed.owners ? await composed.owners.countResults() : null;
  const counts = results?.status === 'ok' ? sumResults(results.perDevice, ids, failures) : null;
  const devices = [...new Set(failures.map((r) => r.device))].sort((a, b) => compareNames(a, b));
  const why = `the route's device condition selects ${devices.length === 1 ? 'this device' : `these ${devices.length} devices`}`;
  return {
    ...decision,
    ownerGroup: { route: route.name, key: 'devices', to: route.to, why, deviceIds, devices, counts, whole: false, note: null },
  };
}

/** A `device` route when NetBox could not say which devices fail: it matched, so no page is lost; it mails the whole report, saying why. */
function unscoped(route: Route, decision: RouteDecision, composed: PlannedReport, lookup: OwnerLookup | undefined): NewRouteMail {
  const cause =
    lookup?.status === 'missing'
      ? lookup.reason
      : (composed.failuresMissing?.reason ?? 'the relay has no NetBox URL and token for this source');
  const note = `NetBox could not say which failing devices the route's device condition selects (${cause}), so this is the whole report.`;
  return wholeReport(decision, 'devices unknown: whole report', {
    route: route.name,
    to: route.to,
    why: "you are this route's recipient",
    note,
  });
}

/** The route's one mail holding the whole report (nothing failed, or NetBox could not say); `reason` ends its decision's. */
function wholeReport(decision: RouteDecision, reason: string, g: Pick<OwnerGroupPlan, 'route' | 'to' | 'why' | 'note'>): NewRouteMail {
  const ownerGroup = { ...g, key: 'whole', deviceIds: [], devices: [], counts: null, whole: true };
  return { ...decision, reason: `${decision.reason}; ${reason}`, ownerGroup };
}

/** The devices the trend calls fixed whose NetBox id the history kept: owner groups count their fixes (buildOwnerGroups drops those still failing). */
function listFixedDevices(composed: PlannedReport) {
  return (composed.trend?.fixedDevices ?? []).filter((d): d is { name: string; id: number } => d.id !== null);
}

import type { ComposedReport } from '../compose';
import { createRoutePlanner } from '../routing';
import type { Route } from '../routing';
import type { ClaimedDelivery, OwnerGroupPlan, Store } from '../store';

/** A route's owner groups for one delivery, and whether they are the recorded ones. */
export interface OwnerGroupsFound {
  groups: OwnerGroupPlan[];
  recorded: boolean;
}

/**
 * The owner groups of route `name` (by owner, or narrowed by a `device` condition) for a delivery: as
 * recorded when the delivery was planned, else resolved now from NetBox exactly as the worker would
 * (with `routes` in order, so `continue` counts), nothing stored.
 */
export async function findOwnerGroups(
  routes: readonly Route[],
  name: string,
  delivery: ClaimedDelivery,
  composed: ComposedReport,
  store: Store | undefined,
): Promise<OwnerGroupsFound> {
  const mails = store && delivery.id > 0 ? await store.listRouteMails([delivery.id]) : [];
  const recorded = mails.flatMap((m) => (m.ownerGroup?.route === name ? [m.ownerGroup] : []));
  if (recorded.length > 0) return { groups: recorded, recorded: true };
  const planner = createRoutePlanner({ routes, store: store ?? { lastRouteMailCompletedAt: () => Promise.resolve(null) } });
  const plan = await planner(delivery, composed);
  return { groups: plan.flatMap((m) => (m.ownerGroup?.route === name ? [m.ownerGroup] : [])), recorded: false };
}

/** "Owner groups (as recorded when the delivery was planned): …", one line per group, the one shown marked. */
export function describeOwnerGroups(owners: OwnerGroupsFound, shown: OwnerGroupPlan | null, indent = ''): string {
  if (owners.groups.length === 0) return '';
  const how = owners.recorded ? 'as recorded when the delivery was planned' : 'resolved now from NetBox; nothing is stored';
  const lines = owners.groups.map((g) => {
    const fixed = g.fixedDevices?.length ? `fixed, failing nothing now: ${g.fixedDevices.join(', ')}` : '';
    const listed = [g.devices.join(', '), fixed].filter((part) => part !== '').join('; ');
    const devices = listed ? ` (${listed})` : '';
    return `${indent}${g === shown ? '* ' : '  '}${g.key}: ${g.to.join(', ')}: ${g.why}${devices}${g.note ? `. ${g.note}` : ''}\n`;
  });
  return `${indent}Owner groups (${how}${shown ? '; choose with --group' : ''}):\n${lines.join('')}`;
}

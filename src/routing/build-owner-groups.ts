import { createHash } from 'node:crypto';
import type { OwnerContact } from '../enrichment';
import type { NetboxDevice, OwnerObjectType } from '../netbox';
import type { Severity } from '../report';
import type { OwnerSpec } from './routes-schema';

/** One failing result as grouping needs it. */
export interface OwnedFailure {
  deviceId: number | null;
  device: string;
  severity: Severity;
}

/** One group of a route's owner mails before its counts are known: who, why, which devices. */
export interface OwnerGroupDraft {
  /** `unowned`, or `o-` and 12 hex of the recipients' hash: the same owners give the same key. */
  key: string;
  to: string[];
  why: string;
  deviceIds: number[];
  devices: string[];
  /** The group's failing results per severity (from the failing results read). */
  failed: Record<Severity, number>;
  /** The NetBox objects (device, site, tenant) through which the group owns its devices; none for `unowned`. */
  objects: { type: OwnerObjectType; id: number }[];
}

/** The key of the group of failures nobody owns. */
export const UNOWNED_GROUP_KEY = 'unowned';

const OBJECT_WORDS: Record<OwnerObjectType, string> = { 'dcim.device': 'device', 'dcim.site': 'site', 'tenancy.tenant': 'tenant' };

/**
 * Splits a route's failing results by owner: for each failing device, each object in `on` (the
 * device, its site, its tenant) whose NetBox contacts (of the route's role and priority, with an
 * e-mail address) are known makes the device part of the group of exactly those contacts; a device
 * owned through its site by one team and its tenant by another is in both groups. Groups are keyed by
 * their recipients, so two sites with the same owner give one mail. A device nobody owns goes to the
 * fallback addresses.
 */
export function buildOwnerGroups(
  spec: OwnerSpec,
  failures: readonly OwnedFailure[],
  devices: readonly NetboxDevice[],
  contacts: readonly OwnerContact[],
): OwnerGroupDraft[] {
  const byId = new Map(devices.map((d) => [d.id, d]));
  const byObject = new Map<string, OwnerContact[]>();
  for (const c of contacts) {
    const key = `${c.objectType}:${c.objectId}`;
    byObject.set(key, [...(byObject.get(key) ?? []), c]);
  }
  const groups = new Map<
    string,
    {
      to: string[];
      objects: string[];
      refs: Map<string, { type: OwnerObjectType; id: number }>;
      ids: Set<number>;
      names: Set<string>;
      failed: Record<Severity, number>;
    }
  >();
  const join = (key: string, to: string[], owner: Owner | null, failure: OwnedFailure) => {
    let group = groups.get(key);
    if (!group) {
      group = { to, objects: [], refs: new Map(), ids: new Set(), names: new Set(), failed: { HIGH: 0, MIDDLE: 0, LOW: 0 } };
      groups.set(key, group);
    }
    if (owner !== null && !group.objects.includes(owner.object)) group.objects.push(owner.object);
    if (owner !== null) group.refs.set(`${owner.ref.type}:${owner.ref.id}`, owner.ref);
    if (failure.deviceId !== null) group.ids.add(failure.deviceId);
    group.names.add(failure.device);
    group.failed[failure.severity] += 1;
  };
  for (const failure of failures) {
    const device = failure.deviceId === null ? undefined : byId.get(failure.deviceId);
    const owners = device ? findOwners(spec, device, byObject) : [];
    if (owners.length === 0) join(UNOWNED_GROUP_KEY, spec.fallback, null, failure);
    for (const owner of owners) join(buildGroupKey(owner.to), owner.to, owner, failure);
  }
  const rank = `${spec.priority ? `${spec.priority} ` : ''}${spec.role}`;
  return [...groups.entries()].map(([key, g]) => ({
    key,
    to: g.to,
    why:
      key === UNOWNED_GROUP_KEY
        ? `no ${rank} contact of these devices (${spec.on.join(', ')}) has an e-mail address in NetBox: you are this route's fallback`
        : `you are the ${rank} contact of ${listObjects(g.objects)}`,
    deviceIds: [...g.ids].sort((a, b) => a - b),
    devices: [...g.names].sort((a, b) => a.localeCompare(b)),
    failed: g.failed,
    objects: [...g.refs.values()],
  }));
}

/** One object owning a device: its contacts' addresses, its words ("site fra1") and itself. */
interface Owner {
  to: string[];
  object: string;
  ref: { type: OwnerObjectType; id: number };
}

/** The owners of one device: per object in `on` with contacts, those contacts' addresses and the object's words. */
function findOwners(spec: OwnerSpec, device: NetboxDevice, byObject: Map<string, OwnerContact[]>): Owner[] {
  const objects: { type: OwnerObjectType; id: number | null; name: string }[] = spec.on.map((on) => {
    if (on === 'device') return { type: 'dcim.device', id: device.id, name: device.name };
    const ref = on === 'site' ? device.site : device.tenant;
    return { type: on === 'site' ? 'dcim.site' : 'tenancy.tenant', id: ref?.id ?? null, name: ref?.slug || ref?.name || '' };
  });
  return objects.flatMap((o) => {
    const found = o.id === null ? [] : (byObject.get(`${o.type}:${o.id}`) ?? []);
    const seen = new Set<string>();
    const to = found
      .map((c) => c.email)
      .filter((email) => (seen.has(email.toLowerCase()) ? false : (seen.add(email.toLowerCase()), true)))
      .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
    return to.length && o.id !== null ? [{ to, object: `${OBJECT_WORDS[o.type]} ${o.name}`, ref: { type: o.type, id: o.id } }] : [];
  });
}

/** The same recipients (whatever their case and order) give the same key, on every replica. */
function buildGroupKey(to: readonly string[]): string {
  const canonical = to
    .map((a) => a.toLowerCase())
    .sort()
    .join('\n');
  return `o-${createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 12)}`;
}

/** "site fra1", "site fra1 and tenant acme", "site a, site b and 3 more". */
function listObjects(objects: readonly string[]): string {
  if (objects.length <= 1) return objects[0] ?? 'these devices';
  if (objects.length <= 3) return `${objects.slice(0, -1).join(', ')} and ${objects.at(-1)}`;
  return `${objects.slice(0, 2).join(', ')} and ${objects.length - 2} more`;
}

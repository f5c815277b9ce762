import { createHash } from 'node:crypto';
import type { OwnerContact } from '../enrichment';
import type { NetboxDevice, OwnerObject, OwnerObjectType } from '../netbox';
import type { OwnerGroupPlan } from '../store';
import type { FailingResult } from '../trend';
import { isDomainAllowed, parseContactAddress } from './parse-contact-address';
import type { OwnerSpec } from './routes-schema';
import { compareNames } from '../shared';

/** Most contacts of one object one mail goes to (a readable To, no fan-out from a grown list); more: to the fallback. */
export const MAX_OWNER_RECIPIENTS = 20;
/** Refused contacts named in the fallback's mail; the log lists them all. */
const MAX_REFUSED_IN_NOTE = 5;

/** The fallback's group: devices nobody (that the route may mail) owns. */
export const UNOWNED_GROUP_KEY = 'unowned';

const OBJECT_WORDS: Record<OwnerObjectType, string> = { 'dcim.device': 'device', 'dcim.site': 'site', 'tenancy.tenant': 'tenant' };

/**
 * Splits a route's failing (and `fixed`) devices by owner, uncounted: each object in `on` with mailable contacts puts the
 * device in the group of exactly those contacts, keyed by recipients (two sites, one owner: one mail); nobody's: the
 * fallback. Also each group's owning objects, and each contact not mailed, for the log.
 */
export function buildOwnerGroups(
  route: string,
  spec: OwnerSpec,
  failures: readonly { device: string; ids: Pick<FailingResult['ids'], 'device'> }[],
  devices: readonly NetboxDevice[],
  contacts: readonly OwnerContact[],
  fixed: readonly { id: number; name: string }[] = [],
) {
  const byId = new Map(devices.map((d) => [d.id, d]));
  const byObject = new Map<string, OwnerContact[]>();
  for (const c of contacts) {
    const key = `${c.objectType}:${c.objectId}`;
    byObject.set(key, [...(byObject.get(key) ?? []), c]);
  }
  const groups = new Map<string, GroupTally>();
  const join = (key: string, to: string[], owner: Owner | null, add: (group: GroupTally) => void) => {
    const group = groups.get(key) ?? startGroup(to);
    groups.set(key, group);
    if (owner !== null && !group.objects.includes(owner.object)) group.objects.push(owner.object);
    if (owner !== null) group.refs.set(`${owner.ref.type}:${owner.ref.id}`, owner.ref);
    add(group);
  };
  const refused = new Set<string>();
  /** Puts a device in its owners' groups, or the fallback's: a contact the route may not mail is not silently dropped. */
  const place = (deviceId: number | null, add: (group: GroupTally) => void) => {
    const device = deviceId === null ? undefined : byId.get(deviceId);
    const found = device ? findOwners(spec, device, byObject) : { owners: [], refused: [] };
    if (found.owners.length === 0 || found.refused.length > 0) join(UNOWNED_GROUP_KEY, spec.fallback, null, add);
    for (const owner of found.owners) join(buildGroupKey(owner.to), owner.to, owner, add);
    for (const line of found.refused) refused.add(line);
  };
  for (const failure of failures)
    place(failure.ids.device, (group) => {
      if (failure.ids.device !== null) group.ids.add(failure.ids.device);
      group.names.add(failure.device);
    });
  const failing = new Set(failures.map((f) => f.device));
  for (const device of fixed) if (!failing.has(device.name)) place(device.id, (group) => group.fixed.set(device.id, device.name));
  return {
    groups: [...groups.entries()].map(([key, g]) => finishGroup(route, spec, key, g, [...refused])),
    objects: new Map([...groups.entries()].map(([key, g]) => [key, [...g.refs.values()]])),
    refused: [...refused],
  };
}

function startGroup(to: string[]) {
  return {
    to,
    objects: [] as string[],
    refs: new Map<string, OwnerObject>(),
    ids: new Set<number>(),
    names: new Set<string>(),
    fixed: new Map<number, string>(),
  };
}
type GroupTally = ReturnType<typeof startGroup>;

/** A group as the plan records it, not counted yet: why its recipients get it, and for the fallback which contacts were not mailed. */
function finishGroup(route: string, spec: OwnerSpec, key: string, g: GroupTally, refused: string[]): OwnerGroupPlan {
  const rank = `${spec.priority ? `${spec.priority} ` : ''}${spec.role}`;
  const unowned = key === UNOWNED_GROUP_KEY;
  const fixedDevices = [...g.fixed.values()].sort((a, b) => compareNames(a, b));
  const more = refused.length > MAX_REFUSED_IN_NOTE ? ` and ${refused.length - MAX_REFUSED_IN_NOTE} more` : '';
  return {
    route,
    key,
    to: g.to,
    why: !unowned
      ? `you are the ${rank} contact of ${listObjects(g.objects)}`
      : refused.length > 0
        ? `NetBox names ${rank} contacts of these devices (${spec.on.join(', ')}) that this route may not mail, or none: you are this route's fallback`
        : `no ${rank} contact of these devices (${spec.on.join(', ')}) has an e-mail address in NetBox: you are this route's fallback`,
    // The failing devices, then the fixed ones (failing in the previous report, nothing now): their fixes are the group's too.
    deviceIds: [...[...g.ids].sort((a, b) => a - b), ...[...g.fixed.keys()].sort((a, b) => a - b)],
    devices: [...g.names].sort((a, b) => compareNames(a, b)),
    ...(fixedDevices.length > 0 ? { fixedDevices } : {}),
    counts: null,
    ownedDevices: null,
    whole: false,
    note: unowned && refused.length > 0 ? `Not mailed: ${refused.slice(0, MAX_REFUSED_IN_NOTE).join('; ')}${more}.` : null,
  };
}

/** One object owning a device: its contacts' addresses, its words ("site fra1") and itself. */
type Owner = { to: string[]; object: string; ref: OwnerObject };

/** The owners of one device (each object in `on` with contacts), and each contact that may not be mailed, described. */
function findOwners(spec: OwnerSpec, device: NetboxDevice, byObject: Map<string, OwnerContact[]>): { owners: Owner[]; refused: string[] } {
  const objects: { type: OwnerObjectType; id: number | null; name: string }[] = spec.on.map((on) => {
    if (on === 'device') return { type: 'dcim.device', id: device.id, name: device.name };
    const ref = on === 'site' ? device.site : device.tenant;
    return { type: on === 'site' ? 'dcim.site' : 'tenancy.tenant', id: ref?.id ?? null, name: ref?.slug || ref?.name || '' };
  });
  const owners: Owner[] = [];
  const refused: string[] = [];
  for (const o of objects) {
    if (o.id === null) continue;
    const object = `${OBJECT_WORDS[o.type]} ${o.name}`;
    const { to, refused: notMailed } = readRecipients(byObject.get(`${o.type}:${o.id}`) ?? [], spec.allowedDomains);
    // Quoted, its control characters escaped, cut short: a NetBox string in a note or a log line.
    const quote = (email: string) => JSON.stringify(email.length > 100 ? `${email.slice(0, 99)}…` : email);
    refused.push(...notMailed.map((r) => `${quote(r.email)} (contact of ${object}): ${r.reason}`));
    if (to.length > MAX_OWNER_RECIPIENTS)
      refused.push(`the ${to.length} contacts of ${object}: more than ${MAX_OWNER_RECIPIENTS} for one mail`);
    else if (to.length > 0) owners.push({ to, object, ref: { type: o.type, id: o.id } });
  }
  return { owners, refused };
}

/** An object's contacts' addresses that may be mailed (each once, sorted), and the others with the reason. */
function readRecipients(contacts: readonly OwnerContact[], allowedDomains: readonly string[]) {
  const seen = new Set<string>();
  const to: string[] = [];
  const refused: { email: string; reason: string }[] = [];
  for (const c of contacts) {
    const parsed = parseContactAddress(c.email);
    if (!parsed.ok) refused.push({ email: c.email, reason: parsed.reason });
    else if (!isDomainAllowed(parsed.domain, allowedDomains))
      refused.push({ email: c.email, reason: `${parsed.domain} is outside the route's allowed_domains` });
    else if (!seen.has(parsed.address.toLowerCase())) {
      seen.add(parsed.address.toLowerCase());
      to.push(parsed.address);
    }
  }
  return { to: to.sort((a, b) => compareNames(a, b)), refused };
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

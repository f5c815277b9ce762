import { SEVERITIES, type Severity } from '../report';
import type { NetboxClient, RequestBudget } from './netbox-client';

/** A related object as NetBox nests it (site, tenant, role, platform, tag). */
export type NetboxRef = NonNullable<ReturnType<typeof readRef>>;

export type NetboxDevice = ReturnType<typeof readDevice>[number];

/** The objects a contact assignment may own a device through (NetBox's `app_label.model`). */
export type OwnerObjectType = 'dcim.device' | 'dcim.site' | 'tenancy.tenant';

export type OwnerObject = { type: OwnerObjectType; id: number };

export type ContactAssignment = ReturnType<typeof readAssignment>[number];

/** Ids per request: NetBox's filters (validity's `test_id`, `device_id` too) take a repeated parameter; 100 ids of up to 7 digits keep a query under 2.5 kB, below every proxy's URL limit. */
const IDS_PER_REQUEST = 100;

export function chunkIds(ids: readonly number[]): number[][] {
  const chunks: number[][] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_REQUEST) chunks.push(ids.slice(i, i + IDS_PER_REQUEST));
  return chunks;
}
/** NetBox's page size cap (MAX_PAGE_SIZE); larger values are silently clamped, `next` covers the rest. */
export const NETBOX_PAGE_SIZE = 1000;

/** A NetBox list's path with these query parameters (an array: each appended), fragment dropped; the path is left for the client to check. */
export function buildListPath(listUrl: string, set: Record<string, string | number | readonly number[]>): string {
  const cut = listUrl.search(/[?#]/);
  const path = cut === -1 ? listUrl : listUrl.slice(0, cut);
  const params = new URLSearchParams(cut === -1 || listUrl[cut] === '#' ? '' : listUrl.slice(cut + 1).split('#', 1)[0]);
  for (const [name, value] of Object.entries(set)) {
    if (typeof value === 'object') for (const id of value) params.append(name, String(id));
    else params.set(name, String(value));
  }
  return `${path}?${params.toString()}`;
}

/** NetBox's and validity's versions from `/api/status/` (absent when it names none): 3.x and 4.x differ, as do validity's filters. */
export async function readNetboxStatus(client: NetboxClient, budget: RequestBudget) {
  const status = (await client.getJson('/api/status/', budget)) as { 'netbox-version'?: unknown; plugins?: Record<string, unknown> } | null;
  const text = (version: unknown) => (typeof version === 'string' ? version : undefined);
  return { netbox: text(status?.['netbox-version']), validity: text(status?.plugins?.validity) };
}

export function listDevices(client: NetboxClient, ids: readonly number[], budget: RequestBudget): Promise<NetboxDevice[]> {
  return listByIds(client, { path: '/api/dcim/devices/', param: 'id', ids }, budget, readDevice);
}

/** Every device of these objects (itself, a site's, a tenant's) keyed `<type>:<id>`, read for all at once, never one per owner. */
export async function listOwnedDevices(client: NetboxClient, objects: readonly OwnerObject[], budget: RequestBudget) {
  const owned = new Map<string, number[]>();
  const add = (key: string, id: number) => {
    const ids = owned.get(key);
    if (ids) ids.push(id);
    else owned.set(key, [id]);
  };
  for (const o of objects) if (o.type === 'dcim.device') add(`dcim.device:${o.id}`, o.id);
  const lists = [
    { type: 'dcim.site', param: 'site_id', refOf: (d: NetboxDevice) => d.site },
    { type: 'tenancy.tenant', param: 'tenant_id', refOf: (d: NetboxDevice) => d.tenant },
  ];
  for (const { type, param, refOf } of lists) {
    const ids = objects.filter((o) => o.type === type).map((o) => o.id);
    for (const device of await listByIds(client, { path: '/api/dcim/devices/', param, ids }, budget, readDevice)) {
      const ref = refOf(device)?.id;
      if (ref != null) add(`${type}:${ref}`, device.id);
    }
  }
  return owned;
}

/** Contact assignments with `role` (and `priority`) to these objects, filtered again: an ignored filter cannot widen who gets mail. */
export async function listContactAssignments(
  client: NetboxClient,
  query: { major: number; objectType: OwnerObjectType; objectIds: readonly number[]; role: string; priority?: string },
  budget: RequestBudget,
): Promise<ContactAssignment[]> {
  const wanted = new Set(query.objectIds);
  const filters: Record<string, string> = { [query.major >= 4 ? 'object_type' : 'content_type']: query.objectType, role: query.role };
  if (query.priority) filters.priority = query.priority;
  const list = { path: '/api/tenancy/contact-assignments/', param: 'object_id', ids: query.objectIds, filters };
  return (await listByIds(client, list, budget, readAssignment)).filter((a) => {
    const samePriority = query.priority === undefined || a.priority === query.priority;
    return a.objectType === query.objectType && wanted.has(a.objectId) && a.role === query.role && samePriority;
  });
}

export function listContacts(client: NetboxClient, ids: readonly number[], budget: RequestBudget) {
  return listByIds(client, { path: '/api/tenancy/contacts/', param: 'id', ids }, budget, readContact);
}

/** Each device's results per severity, from one read of the whole report: any set of devices is then counted without asking again. */
export async function countResultsPerDevice(client: NetboxClient, resultsUrl: string, budget: RequestBudget) {
  const perDevice = new Map<number, Record<Severity, number>>();
  await client.streamList(
    buildListPath(resultsUrl, { limit: NETBOX_PAGE_SIZE, omit: 'explanation' }),
    (page) => {
      for (const raw of page) {
        const { deviceId, severity } = readResultRefs(raw);
        if (deviceId === null) continue;
        const counts = perDevice.get(deviceId) ?? { HIGH: 0, MIDDLE: 0, LOW: 0 };
        counts[severity] += 1;
        perDevice.set(deviceId, counts);
      }
    },
    budget,
  );
  return perDevice;
}

/** Reads the list at `path` for these ids, {@link IDS_PER_REQUEST} at a time (`param` repeated, the filters beside it), each row with `read`. */
async function listByIds<T>(
  client: NetboxClient,
  list: { path: string; param: string; ids: readonly number[]; filters?: Record<string, string> },
  budget: RequestBudget,
  read: (raw: Record<string, unknown>) => T[],
): Promise<T[]> {
  const rows: T[] = [];
  for (const ids of chunkIds([...new Set(list.ids)].sort((a, b) => a - b))) {
    const path = buildListPath(list.path, { [list.param]: ids, ...list.filters, limit: NETBOX_PAGE_SIZE });
    await client.streamList(path, (page) => page.forEach((raw) => rows.push(...read(raw))), budget);
  }
  return rows;
}

/** A validity test result's nested test and device (empty when absent), their ids, and the test's severity. */
export function readResultRefs(raw: Record<string, unknown>) {
  const test = (raw.test ?? {}) as Record<string, unknown>;
  const device = (raw.device ?? {}) as Record<string, unknown>;
  const named = typeof test.severity === 'string' ? test.severity.toUpperCase() : '';
  return {
    test,
    device,
    testId: typeof test.id === 'number' ? test.id : null,
    deviceId: typeof device.id === 'number' ? device.id : null,
    // A severity validity does not name counts as its default, MIDDLE.
    severity: (SEVERITIES as readonly string[]).includes(named) ? (named as Severity) : 'MIDDLE',
  };
}

function readRef(raw: unknown) {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  const name = typeof o.name === 'string' ? o.name : typeof o.display === 'string' ? o.display : '';
  const slug = typeof o.slug === 'string' ? o.slug : name;
  if (!name && !slug) return null;
  return { id: typeof o.id === 'number' ? o.id : null, name, slug };
}

function readDevice(raw: Record<string, unknown>) {
  if (typeof raw.id !== 'number') return [];
  return [
    {
      id: raw.id,
      name: typeof raw.name === 'string' && raw.name ? raw.name : `device ${raw.id}`,
      site: readRef(raw.site),
      tenant: readRef(raw.tenant),
      // `role` in NetBox ≥ 3.6 (and only that from 4.0), `device_role` before.
      role: readRef(raw.role) ?? readRef(raw.device_role),
      platform: readRef(raw.platform),
      tags: Array.isArray(raw.tags) ? raw.tags.map(readRef).filter((t): t is NetboxRef => t !== null) : [],
    },
  ];
}

/** A contact (`/api/tenancy/contacts/`): the brief form nested in assignments has no e-mail. */
function readContact(raw: Record<string, unknown>) {
  if (typeof raw.id !== 'number') return [];
  const name = typeof raw.name === 'string' ? raw.name : `contact ${raw.id}`;
  return [{ id: raw.id, name, email: typeof raw.email === 'string' ? raw.email.trim() : '' }];
}

function readAssignment(raw: Record<string, unknown>) {
  const type = typeof raw.object_type === 'string' ? raw.object_type : raw.content_type;
  const contact = raw.contact as Record<string, unknown> | null | undefined;
  const role = readRef(raw.role);
  const priority = raw.priority && typeof raw.priority === 'object' ? (raw.priority as { value?: unknown }).value : raw.priority;
  if (typeof type !== 'string' || typeof raw.object_id !== 'number' || typeof contact?.id !== 'number' || !role) return [];
  return [
    {
      objectType: type as OwnerObjectType,
      objectId: raw.object_id,
      contactId: contact.id,
      role: role.slug,
      // `primary`, `secondary`, … or null when unset.
      priority: typeof priority === 'string' && priority !== '' ? priority : null,
    },
  ];
}

import type { NetboxClient, RequestBudget } from './netbox-client';
import { NetboxError } from './netbox-error';

/** A related object as NetBox nests it (site, tenant, role, platform, tag): what routes match on. */
export interface NetboxRef {
  id: number | null;
  name: string;
  slug: string;
}

/** A device with what routes and owner look-ups need from NetBox's `/api/dcim/devices/`. */
export interface NetboxDevice {
  id: number;
  name: string;
  site: NetboxRef | null;
  tenant: NetboxRef | null;
  /** `role` in NetBox ≥ 3.6 (and only that from 4.0), `device_role` before. */
  role: NetboxRef | null;
  platform: NetboxRef | null;
  tags: NetboxRef[];
}

/** The objects a contact assignment may own a device through (NetBox's `app_label.model`). */
export type OwnerObjectType = 'dcim.device' | 'dcim.site' | 'tenancy.tenant';

/** One contact assignment (`/api/tenancy/contact-assignments/`): contact → object, with a role and priority. */
export interface ContactAssignment {
  objectType: OwnerObjectType;
  objectId: number;
  contactId: number;
  /** The contact role's slug. */
  role: string;
  /** `primary`, `secondary`, … or null when unset. */
  priority: string | null;
}

/** A contact (`/api/tenancy/contacts/`): the brief form nested in assignments has no e-mail. */
export interface NetboxContact {
  id: number;
  name: string;
  email: string;
}

/** Ids per request: NetBox takes a repeated `id=`; a long URL is refused by some proxies. */
const IDS_PER_REQUEST = 50;

/** NetBox's major version from `/api/status/`: contact assignments name their object's type differently in 3.x and 4.x. */
export async function readNetboxMajor(client: NetboxClient, budget: RequestBudget): Promise<number> {
  const status = (await client.getJson('/api/status/', budget)) as Record<string, unknown> | null;
  const version = status?.['netbox-version'];
  const major = typeof version === 'string' ? Number.parseInt(version, 10) : Number.NaN;
  if (!Number.isFinite(major)) throw new NetboxError('PROTOCOL', 'NetBox /api/status/ has no netbox-version');
  return major;
}

/** The devices with these ids, read in batches (`id=` repeated) following NetBox's `next` links. */
export async function listDevices(
  client: NetboxClient,
  ids: readonly number[],
  budget: RequestBudget,
  pageSize = 1000,
): Promise<NetboxDevice[]> {
  const devices: NetboxDevice[] = [];
  for (const chunk of chunkIds(ids)) {
    const query = new URLSearchParams(chunk.map((id): [string, string] => ['id', String(id)]));
    query.set('limit', String(pageSize));
    await client.streamList(`/api/dcim/devices/?${query.toString()}`, (page) => devices.push(...page.flatMap(readDevice)), budget);
  }
  return devices;
}

/**
 * Every device NetBox lists for these objects (a device itself, every device of a site or of a
 * tenant), by id: the devices an owner owns, failing or not, whose results make the owner's ratios.
 */
export async function listOwnedDeviceIds(
  client: NetboxClient,
  objects: readonly { type: OwnerObjectType; id: number }[],
  budget: RequestBudget,
  pageSize = 1000,
): Promise<number[]> {
  const ids = new Set(objects.filter((o) => o.type === 'dcim.device').map((o) => o.id));
  const filters: [OwnerObjectType, string][] = [
    ['dcim.site', 'site_id'],
    ['tenancy.tenant', 'tenant_id'],
  ];
  for (const [type, filter] of filters) {
    for (const chunk of chunkIds(objects.filter((o) => o.type === type).map((o) => o.id))) {
      const query = new URLSearchParams(chunk.map((id): [string, string] => [filter, String(id)]));
      query.set('brief', '1');
      query.set('limit', String(pageSize));
      await client.streamList(
        `/api/dcim/devices/?${query.toString()}`,
        (page) => {
          for (const raw of page) if (typeof raw.id === 'number') ids.add(raw.id);
        },
        budget,
      );
    }
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * The assignments of contacts with `role` (and `priority`) to these objects. NetBox 4.x filters and
 * names the object's type `object_type`, 3.x `content_type`; both are read, and the answer is
 * filtered again here, so a filter NetBox ignored cannot widen who gets mail.
 */
export async function listContactAssignments(
  client: NetboxClient,
  query: { major: number; objectType: OwnerObjectType; objectIds: readonly number[]; role: string; priority?: string },
  budget: RequestBudget,
  pageSize = 1000,
): Promise<ContactAssignment[]> {
  const found: ContactAssignment[] = [];
  const wanted = new Set(query.objectIds);
  for (const chunk of chunkIds(query.objectIds)) {
    const params = new URLSearchParams(chunk.map((id): [string, string] => ['object_id', String(id)]));
    params.set(query.major >= 4 ? 'object_type' : 'content_type', query.objectType);
    params.set('role', query.role);
    if (query.priority) params.set('priority', query.priority);
    params.set('limit', String(pageSize));
    await client.streamList(
      `/api/tenancy/contact-assignments/?${params.toString()}`,
      (page) => {
        for (const a of page.flatMap(readAssignment)) {
          const sameRole = a.role === query.role;
          const samePriority = query.priority === undefined || a.priority === query.priority;
          if (a.objectType === query.objectType && wanted.has(a.objectId) && sameRole && samePriority) found.push(a);
        }
      },
      budget,
    );
  }
  return found;
}

/** The contacts with these ids (for their e-mail addresses), in batches. */
export async function listContacts(
  client: NetboxClient,
  ids: readonly number[],
  budget: RequestBudget,
  pageSize = 1000,
): Promise<NetboxContact[]> {
  const contacts: NetboxContact[] = [];
  for (const chunk of chunkIds(ids)) {
    const query = new URLSearchParams(chunk.map((id): [string, string] => ['id', String(id)]));
    query.set('limit', String(pageSize));
    await client.streamList(
      `/api/tenancy/contacts/?${query.toString()}`,
      (page) => {
        for (const raw of page) {
          if (typeof raw.id !== 'number') continue;
          contacts.push({
            id: raw.id,
            name: typeof raw.name === 'string' ? raw.name : `contact ${raw.id}`,
            email: typeof raw.email === 'string' ? raw.email.trim() : '',
          });
        }
      },
      budget,
    );
  }
  return contacts;
}

/** Passed and counted results per severity, as the webhook's counts are. */
export type SeverityCounts = Record<'HIGH' | 'MIDDLE' | 'LOW', { passed: number; count: number }>;

/**
 * The results of a report on these devices, counted per severity (`count` of a one-item page, one
 * request per severity and batch): the ratios of one owner's devices. `failedPerSeverity` comes from
 * the failing results already read, so passed = counted − failed.
 */
export async function countDeviceResults(
  client: NetboxClient,
  resultsUrl: string,
  deviceIds: readonly number[],
  failedPerSeverity: Record<'HIGH' | 'MIDDLE' | 'LOW', number>,
  budget: RequestBudget,
): Promise<SeverityCounts> {
  const cut = resultsUrl.search(/[?#]/);
  const path = cut === -1 ? resultsUrl : resultsUrl.slice(0, cut);
  const base = cut === -1 || resultsUrl[cut] === '#' ? '' : resultsUrl.slice(cut + 1).split('#', 1)[0];
  const counts: SeverityCounts = { HIGH: { passed: 0, count: 0 }, MIDDLE: { passed: 0, count: 0 }, LOW: { passed: 0, count: 0 } };
  for (const severity of ['HIGH', 'MIDDLE', 'LOW'] as const) {
    for (const chunk of chunkIds(deviceIds)) {
      const params = new URLSearchParams(base);
      for (const id of chunk) params.append('device_id', String(id));
      params.set('severity', severity);
      params.set('limit', '1');
      params.set('omit', 'explanation');
      const page = (await client.getJson(`${path}?${params.toString()}`, budget)) as { count?: unknown } | null;
      if (typeof page?.count !== 'number') throw new NetboxError('PROTOCOL', `NetBox's results list has no count (${path})`);
      counts[severity].count += page.count;
    }
    counts[severity].passed = Math.max(0, counts[severity].count - failedPerSeverity[severity]);
  }
  return counts;
}

function chunkIds(ids: readonly number[]): number[][] {
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  const chunks: number[][] = [];
  for (let i = 0; i < unique.length; i += IDS_PER_REQUEST) chunks.push(unique.slice(i, i + IDS_PER_REQUEST));
  return chunks;
}

function readRef(raw: unknown): NetboxRef | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  const name = typeof o.name === 'string' ? o.name : typeof o.display === 'string' ? o.display : '';
  const slug = typeof o.slug === 'string' ? o.slug : name;
  if (!name && !slug) return null;
  return { id: typeof o.id === 'number' ? o.id : null, name, slug };
}

function readDevice(raw: Record<string, unknown>): NetboxDevice[] {
  if (typeof raw.id !== 'number') return [];
  return [
    {
      id: raw.id,
      name: typeof raw.name === 'string' && raw.name ? raw.name : `device ${raw.id}`,
      site: readRef(raw.site),
      tenant: readRef(raw.tenant),
      role: readRef(raw.role) ?? readRef(raw.device_role),
      platform: readRef(raw.platform),
      tags: Array.isArray(raw.tags) ? raw.tags.map(readRef).filter((t): t is NetboxRef => t !== null) : [],
    },
  ];
}

function readAssignment(raw: Record<string, unknown>): ContactAssignment[] {
  // 4.x: object_type; 3.x: content_type. Both are "app_label.model" strings.
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
      priority: typeof priority === 'string' && priority !== '' ? priority : null,
    },
  ];
}

import {
  countResultsPerDevice,
  listContactAssignments,
  listContacts,
  listDevices,
  listOwnedDevices,
  NetboxError,
  readNetboxStatus,
  type ContactAssignment,
  type NetboxClient,
  type NetboxDevice,
  type OwnerObject,
  type OwnerObjectType,
  type RequestBudget,
} from '../netbox';
import type { Severity } from '../report';
import { systemClock, type Clock } from '../shared';

/** Which contacts own a device, as a route asks for them. */
type OwnerQuery = { role: string; on: readonly ('device' | 'site' | 'tenant')[]; priority?: string };

/** A contact with an e-mail address, assigned to an object that owns failing devices. */
export type OwnerContact = ContactAssignment & { contactName: string; email: string };

/** Why NetBox could not say, in one line for the mail and the log. */
type LookupMissing = { status: 'missing'; code: string; reason: string };

/** What NetBox says about a report's failing devices and their owners, or why it could not say. */
export type OwnerLookup = { status: 'ok'; devices: NetboxDevice[]; contacts: OwnerContact[] } | LookupMissing;

/** Each device's results in the report per severity (a device absent has none), or why NetBox could not count them. */
export type ResultCounts = { status: 'ok'; perDevice: Map<number, Record<Severity, number>> } | LookupMissing;

/** Owner look-ups on one delivery's budget, each in bulk: NetBox's requests grow with the report's pages, not its owners. */
export interface OwnerDirectory {
  lookup(deviceIds: readonly number[], queries: readonly OwnerQuery[]): Promise<OwnerLookup>;
  /** Every device NetBox lists for each of these objects (devices, sites, tenants), keyed `<type>:<id>`; null when it could not say. */
  ownedDevices(objects: readonly OwnerObject[]): Promise<Map<string, number[]> | null>;
  /** The report's results per device and severity, read once. */
  countResults(): Promise<ResultCounts>;
}

type OwnerResolverOptions = { client: NetboxClient; budgetMs: number; clock?: Clock };

/** Answers kept at most: one per recent report and route query. */
const MAX_CACHED = 200;
/** How long a report's answer is reused (a retry of a plan step, a preview right after). */
const CACHE_TTL_MS = 10 * 60 * 1000;

/** One NetBox source's owner resolver: a budget and a TTL cache per report, so routes and quick retries ask once. Never throws. */
export function createOwnerResolver(options: OwnerResolverOptions): (reportKey: string, resultsUrl: string) => OwnerDirectory {
  const clock = options.clock ?? systemClock;
  const cache = new Map<string, { at: number; value: Promise<unknown> }>();
  const cached = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    const now = clock.now();
    const hit = cache.get(key);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.value as Promise<T>;
    const value = load();
    cache.set(key, { at: now, value });
    // A failure is not kept: the next look-up asks NetBox again.
    value.catch(() => cache.delete(key));
    if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
    return value;
  };
  return (reportKey, resultsUrl) => {
    let budget: RequestBudget | undefined;
    const startBudget = () => (budget ??= { deadline: clock.now() + options.budgetMs });
    return {
      async lookup(deviceIds, queries) {
        const ids = [...deviceIds].sort((a, b) => a - b).join(',');
        const key = `${reportKey}|owners|${ids}|${JSON.stringify(queries)}`;
        try {
          return await cached(key, () => lookupOwners(options.client, deviceIds, queries, startBudget()));
        } catch (error) {
          return describeLookupFailure(error, options, 'devices and contacts');
        }
      },
      async ownedDevices(objects) {
        const names = objects.map((o) => `${o.type}:${o.id}`).sort();
        const key = `${reportKey}|owned|${names.join(',')}`;
        try {
          return await cached(key, () => listOwnedDevices(options.client, objects, startBudget()));
        } catch {
          return null;
        }
      },
      async countResults() {
        try {
          const perDevice = await cached(`${reportKey}|counts`, () => countResultsPerDevice(options.client, resultsUrl, startBudget()));
          return { status: 'ok', perDevice };
        } catch (error) {
          return describeLookupFailure(error, options, "the report's results");
        }
      },
    };
  };
}

async function lookupOwners(
  client: NetboxClient,
  deviceIds: readonly number[],
  queries: readonly OwnerQuery[],
  budget: RequestBudget,
): Promise<OwnerLookup> {
  const devices = deviceIds.length ? await listDevices(client, deviceIds, budget) : [];
  if (queries.length === 0) return { status: 'ok', devices, contacts: [] };
  const major = Number.parseInt((await readNetboxStatus(client, budget)).netbox ?? '', 10);
  if (!Number.isFinite(major)) throw new NetboxError('PROTOCOL', 'NetBox /api/status/ has no netbox-version');
  // Per word a route uses, the owning objects' NetBox type and ids.
  const objects: Record<OwnerQuery['on'][number], { objectType: OwnerObjectType; ids: number[] }> = {
    device: { objectType: 'dcim.device', ids: devices.map((d) => d.id) },
    site: { objectType: 'dcim.site', ids: devices.flatMap((d) => (d.site?.id != null ? [d.site.id] : [])) },
    tenant: { objectType: 'tenancy.tenant', ids: devices.flatMap((d) => (d.tenant?.id != null ? [d.tenant.id] : [])) },
  };
  const asked = new Set<string>();
  const assignments = [];
  for (const query of queries) {
    for (const on of query.on) {
      const { objectType, ids } = objects[on];
      const key = `${objectType}|${query.role}|${query.priority ?? ''}`;
      if (asked.has(key) || ids.length === 0) continue;
      asked.add(key);
      const q = { major, objectType, objectIds: ids, role: query.role, priority: query.priority };
      assignments.push(...(await listContactAssignments(client, q, budget)));
    }
  }
  const contacts = new Map((await listContacts(client, [...new Set(assignments.map((a) => a.contactId))], budget)).map((c) => [c.id, c]));
  return {
    status: 'ok',
    devices,
    contacts: assignments.flatMap((a) => {
      const contact = contacts.get(a.contactId);
      // A contact without an e-mail address cannot be mailed: the device falls to the next owner or the fallback.
      if (!contact || !contact.email) return [];
      return [{ ...a, contactName: contact.name, email: contact.email }];
    }),
  };
}

/** Why NetBox could not give `what` (devices and contacts, or the report's results), in one line for the mail and the log. */
function describeLookupFailure(
  error: unknown,
  options: OwnerResolverOptions,
  what: 'devices and contacts' | "the report's results",
): LookupMissing {
  const failed = `reading ${what} from NetBox failed (${(error as Error)?.message ?? String(error)})`;
  if (!(error instanceof NetboxError)) return { status: 'missing', code: 'PROTOCOL', reason: failed };
  const seconds = Math.round(options.budgetMs / 100) / 10;
  const may = what === 'devices and contacts' ? 'dcim and tenancy' : "validity's test results";
  const reasons: Record<string, string> = {
    AUTH: `NetBox refused the relay's token when asked for ${what} (HTTP ${error.status ?? 403}); check that it may read ${may}`,
    TIMEOUT: `NetBox did not give ${what} within the ${seconds} s allowed`,
    UNREACHABLE: `NetBox at ${options.client.url} could not be reached for ${what} (${error.detail ?? error.message})`,
    SERVER: `NetBox answered HTTP ${error.status ?? 500} when asked for ${what}, and kept failing`,
  };
  return { status: 'missing', code: error.code, reason: reasons[error.code] ?? failed };
}

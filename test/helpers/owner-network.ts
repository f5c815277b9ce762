import type { NetboxDouble, ResultSpec } from './validity-results-double';

/** The five tests of every device: two HIGH, two MIDDLE, one LOW. */
const TESTS: ResultSpec['test'][] = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' },
  { id: 2, name: 'aaa-servers', severity: 'HIGH' },
  { id: 3, name: 'snmp-community', severity: 'MIDDLE' },
  { id: 4, name: 'syslog-servers', severity: 'MIDDLE' },
  { id: 5, name: 'login-banner', severity: 'LOW' },
];
export const DEVICES_PER_SITE = 5;
const OWNER_ROLE = { id: 1, name: 'Owner', slug: 'owner' };
const ACCESS = { id: 5, name: 'Access switch', slug: 'access-switch' };

/** A route mailing each site's primary owner, with a fallback and allowed_domains. */
export const OWNER_ROUTES = `
routes:
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [site], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`;

/** Site `i`'s slug, its owner's address and its devices' names (`sw-0007-0` … `sw-0007-4`; device 0 fails one HIGH test). */
export const siteSlug = (i: number) => `site-${String(i).padStart(4, '0')}`;
export const ownerOf = (i: number) => `owner-${String(i).padStart(4, '0')}@example.com`;
export const deviceName = (i: number, k: number) => `sw-${String(i).padStart(4, '0')}-${k}`;

/**
 * A network of `sites` sites (1…sites) of five devices each, every device evaluated by five tests, one failing
 * HIGH result per site (its first device's ntp-servers), one primary owner contact per site: devices, contacts
 * and assignments go into the NetBox double; the report's results are returned.
 */
export function stockOwnerNetwork(netbox: Pick<NetboxDouble, 'devices' | 'contacts' | 'assignments'>, sites: number): ResultSpec[] {
  const results: ResultSpec[] = [];
  for (let i = 1; i <= sites; i += 1) {
    const site = { id: i, name: `Site ${String(i).padStart(4, '0')}`, slug: siteSlug(i) };
    for (let k = 0; k < DEVICES_PER_SITE; k += 1) {
      const device = { id: i * 10 + k, name: deviceName(i, k) };
      netbox.devices.set(device.id, { ...device, site, role: ACCESS, tags: [] });
      for (const test of TESTS) results.push({ id: results.length + 1, test, device, passed: !(k === 0 && test.id === 1) });
    }
    netbox.contacts.set(i, { id: i, name: `Owner ${i}`, email: ownerOf(i) });
    netbox.assignments.push({ id: i, objectType: 'dcim.site', objectId: i, contactId: i, role: OWNER_ROLE, priority: 'primary' });
  }
  return results;
}

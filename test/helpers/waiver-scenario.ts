/**
 * The NetBox of the waiver scenarios (integration on both stores, and the Chromium e2e): two tests, two
 * sites with one owner each, and routes that show each decision a waiver changes (every report, on-change,
 * owners).
 */
export const TELNET = { id: 1, name: 'telnet-disabled', severity: 'HIGH' as const };
export const NTP = { id: 2, name: 'ntp-synced', severity: 'MIDDLE' as const };
export const OWNER = { id: 1, name: 'Owner', slug: 'owner' };
export const FRA = { id: 1, name: 'Frankfurt 1', slug: 'fra1' };
export const AMS = { id: 2, name: 'Amsterdam 1', slug: 'ams1' };

export const WAIVER_ROUTES = `
routes:
  - name: team
    to: team@example.com
    continue: true
  - name: changes
    to: changes@example.com
    notify: on-change
    continue: true
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [site], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`;

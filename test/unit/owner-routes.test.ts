import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import type { OwnerContact } from '../../src/enrichment';
import type { NetboxDevice } from '../../src/netbox';
import { buildOwnerGroups, parseRoutesFile, planRoutes, RoutesFileError, type ReportFacts } from '../../src/routing';

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'owner-routes.yaml');

function issuesOf(text: string): RoutesFileError['issues'] {
  try {
    parseRoutesFile(text, 'routes.yaml');
  } catch (error) {
    if (error instanceof RoutesFileError) return error.issues;
    throw error;
  }
  throw new Error('expected the routes file to be rejected');
}

const ref = (id: number, slug: string) => ({ id, name: slug.toUpperCase(), slug });
function device(id: number, name: string, site: string, siteId: number, extra: Partial<NetboxDevice> = {}): NetboxDevice {
  return { id, name, site: ref(siteId, site), tenant: null, role: ref(5, 'access-switch'), platform: null, tags: [], ...extra };
}
function contact(objectType: OwnerContact['objectType'], objectId: number, email: string): OwnerContact {
  return { objectType, objectId, contactId: objectId * 100 + email.length, contactName: email, email, role: 'owner', priority: 'primary' };
}

const facts = (devices?: NetboxDevice[]): ReportFacts => ({
  reportId: 1,
  completedAt: '2026-03-01T10:00:00.000Z',
  counts: {
    HIGH: { passed: 3, count: 6 },
    MIDDLE: { passed: 6, count: 6 },
    LOW: { passed: 0, count: 0 },
    overall: { passed: 9, count: 12 },
  },
  customFields: {},
  source: { name: 'default', tags: {} },
  ...(devices ? { devices } : {}),
});

describe('routes file: recipients from NetBox contacts and device conditions', () => {
  it('accepts the shipped example and reads netbox_contacts into the route', () => {
    const routes = parseRoutesFile(fs.readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
    expect(routes.map((r) => r.name)).toEqual(['core-page', 'owners']);
    expect(routes[0].match).toEqual({ device: { role: ['core-switch'] } });
    expect(routes[1].to).toEqual([]);
    expect(routes[1].owners).toEqual({
      role: 'owner',
      on: ['device', 'site', 'tenant'],
      priority: 'primary',
      fallback: ['noc@example.com'],
      allowedDomains: ['example.com'],
    });
    expect(routes[1].cc).toEqual(['compliance-archive@example.com']);
  });

  it('`on` defaults to device, site and tenant; `priority` is optional', () => {
    const [route] = parseRoutesFile(
      [
        'routes:',
        '  - name: o',
        '    to:',
        '      netbox_contacts: { role: operations }',
        '      fallback: [a@example.com, b@example.com]',
        '      allowed_domains: "*"',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    expect(route.owners).toEqual({
      role: 'operations',
      on: ['device', 'site', 'tenant'],
      fallback: ['a@example.com', 'b@example.com'],
      allowedDomains: ['*'],
    });
  });

  it('refuses a contacts route without a fallback, an unknown object, a bad priority and an empty device condition, naming each', () => {
    const issues = issuesOf(
      [
        'routes:',
        '  - name: no-fallback',
        '    to:',
        '      netbox_contacts: { role: owner, on: [site, rack], priority: first }',
        '  - name: empty-device',
        '    match: { device: {} }',
        '    to: a@example.com',
        '',
      ].join('\n'),
    );
    const text = issues.map((i) => `${i.line} ${i.where}: ${i.message}`).join('\n');
    expect(text).toContain('4 route 1 (no-fallback) to.netbox_contacts.on: must be one or more of device, site, tenant');
    expect(text).toContain('4 route 1 (no-fallback) to.netbox_contacts.priority: must be one of primary, secondary, tertiary, inactive');
    expect(text).toContain('route 1 (no-fallback) to.fallback: must be an address or a list of addresses');
    expect(text).toContain('route 2 (empty-device) match.device: give at least one of site, tenant, role, platform, tags');
    expect(issues.find((i) => i.where.startsWith('route 2'))?.line).toBe(6);
  });
});

describe('routes by owner need a NetBox to ask', () => {
  it('check-config refuses a netbox_contacts route without NETBOX_URL and a token, and takes it with them', () => {
    const read = (f: string) => fs.readFileSync(f, 'utf8');
    const env = { ROUTES_FILE: EXAMPLE, SMTP_URL: 'smtp://127.0.0.1:25' };
    let error: unknown;
    try {
      loadConfig({ ...env, NETBOX_URL: 'https://netbox.example.com' }, { readFile: read });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { variable: 'ROUTES_FILE', message: expect.stringContaining('route owners to.netbox_contacts: needs NETBOX_URL and NETBOX_TOKEN') },
    ]);
    const config = loadConfig(
      { ...env, NETBOX_URL: 'https://netbox.example.com', NETBOX_TOKEN: '0123456789abcdef0123456789abcdef01234567' },
      { readFile: read },
    );
    expect(config.routing.routes.map((r) => r.name)).toEqual(['core-page', 'owners']);
  });
});

describe('device conditions pick the failing devices a route is about', () => {
  const core = device(1, 'core-1', 'fra1', 1, { role: ref(6, 'core-switch'), tags: [ref(9, 'pci')] });
  const access = device(2, 'acc-1', 'fra1', 1);
  const routes = parseRoutesFile(
    ['routes:', '  - name: page', '    match: { device: { role: core-switch, tags: [pci] } }', '    to: oncall@example.com', ''].join('\n'),
    'routes.yaml',
  );

  it('with the devices known: matches when one fails, and keeps only those devices for the mail', () => {
    expect(planRoutes(routes, facts([core, access]), null, () => null)[0]).toMatchObject({
      outcome: 'send',
      devices: [1],
    });
    expect(planRoutes(routes, facts([access]), null, () => null)[0]).toMatchObject({ outcome: 'skipped' });
  });

  it('a report where nothing failed has no failing device: the route does not match, whatever NetBox could say', () => {
    const allPassed = { ...facts(), counts: { ...facts().counts, HIGH: { passed: 6, count: 6 }, overall: { passed: 12, count: 12 } } };
    expect(planRoutes(routes, allPassed, null, () => null)[0]).toMatchObject({ outcome: 'skipped' });
  });

  it('with the devices unknown (NetBox down): still matches, with the whole report, so no page is lost', () => {
    const [decision] = planRoutes(routes, facts(), null, () => null);
    expect(decision.outcome).toBe('send');
    expect(decision.devices).toBeUndefined();
  });
});

describe('owner groups: one per set of owners, a fallback for the rest', () => {
  const spec = {
    role: 'owner',
    on: ['device', 'site', 'tenant'] as ('device' | 'site' | 'tenant')[],
    priority: 'primary' as const,
    fallback: ['noc@example.com'],
    allowedDomains: ['example.com'],
  };
  const devices = [
    device(1, 'fra-1', 'fra1', 1, { tenant: ref(7, 'acme') }),
    device(2, 'fra-2', 'fra1', 1),
    device(3, 'ams-1', 'ams1', 2),
    device(4, 'lon-1', 'lon1', 3),
  ];
  const failures = [
    { device: 'fra-1', ids: { device: 1 }, severity: 'HIGH' as const },
    { device: 'fra-2', ids: { device: 2 }, severity: 'MIDDLE' as const },
    { device: 'ams-1', ids: { device: 3 }, severity: 'HIGH' as const },
    { device: 'lon-1', ids: { device: 4 }, severity: 'LOW' as const },
    { device: 'unknown-device', ids: { device: null }, severity: 'HIGH' as const },
  ];

  it('splits by the owners of each object; a device owned twice is in both groups; the unowned go to the fallback', () => {
    const contacts = [
      contact('dcim.site', 1, 'Alice@example.com'),
      contact('dcim.site', 1, 'eve@example.com'),
      contact('dcim.site', 2, 'bob@example.com'),
      contact('tenancy.tenant', 7, 'carol@example.com'),
    ];
    const { groups } = buildOwnerGroups('owners', spec, failures, devices, contacts);
    const byTo = Object.fromEntries(groups.map((g) => [g.to.join(','), g]));
    expect(Object.keys(byTo).sort()).toEqual([
      'Alice@example.com,eve@example.com',
      'bob@example.com',
      'carol@example.com',
      'noc@example.com',
    ]);
    expect(byTo['Alice@example.com,eve@example.com']).toMatchObject({
      why: 'you are the primary owner contact of site fra1',
      deviceIds: [1, 2],
    });
    expect(byTo['carol@example.com']).toMatchObject({ why: 'you are the primary owner contact of tenant acme', deviceIds: [1] });
    expect(byTo['noc@example.com']).toMatchObject({ key: 'unowned', deviceIds: [4], devices: ['lon-1', 'unknown-device'] });
  });

  it('the same owners give the same key whatever their order and case, and one mail for two sites they both own', () => {
    const { groups: a } = buildOwnerGroups('owners', spec, failures.slice(0, 3), devices, [
      contact('dcim.site', 1, 'x@example.com'),
      contact('dcim.site', 1, 'Y@example.com'),
    ]);
    const { groups: b } = buildOwnerGroups('owners', spec, failures.slice(0, 3), devices, [
      contact('dcim.site', 1, 'y@example.com'),
      contact('dcim.site', 1, 'X@example.com'),
      contact('dcim.site', 2, 'x@example.com'),
      contact('dcim.site', 2, 'y@example.com'),
    ]);
    expect(a.find((g) => g.key !== 'unowned')!.key).toBe(b[0].key);
    expect(b).toHaveLength(1);
    expect(b[0]).toMatchObject({ why: 'you are the primary owner contact of site fra1 and site ams1', deviceIds: [1, 2, 3] });
  });

  it('a device fixed since the previous report joins its owners, apart from the failing ones; one still failing is not "fixed"', () => {
    const contacts = [contact('dcim.site', 1, 'alice@example.com'), contact('dcim.site', 2, 'bob@example.com')];
    const fixed = [
      { id: 3, name: 'ams-1' },
      { id: 2, name: 'fra-2' },
    ];
    const { groups } = buildOwnerGroups('owners', spec, failures.slice(0, 2), devices, contacts, fixed);
    const byTo = Object.fromEntries(groups.map((g) => [g.to.join(','), g]));
    // Bob's only device fails nothing now: his group holds its fix alone (its id, to be counted; no failing device).
    expect(byTo['bob@example.com']).toMatchObject({
      deviceIds: [3],
      devices: [],
      fixedDevices: ['ams-1'],
    });
    // fra-2 still fails something: it is one of Alice's failing devices, not a fixed one.
    expect(byTo['alice@example.com']).toMatchObject({ deviceIds: [1, 2], devices: ['fra-1', 'fra-2'] });
    expect(byTo['alice@example.com'].fixedDevices).toBeUndefined();
  });
});

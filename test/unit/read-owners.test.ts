import { createOwnerResolver } from '../../src/enrichment';
import { createNetboxClient, listContactAssignments, type NetboxClient } from '../../src/netbox';
import { startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const OWNER = { id: 1, name: 'Owner', slug: 'owner' };
const SITE = { id: 1, name: 'Frankfurt 1', slug: 'fra1' };

describe('reading owners from NetBox', () => {
  let netbox: NetboxDouble;
  let client: NetboxClient;
  afterEach(async () => {
    client?.close();
    await netbox.close();
  });

  it('filters the answer again: a NetBox that ignores the object-type filter of the other version cannot widen who gets mail', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}`, version: '4.6.2', maxPageSize: 1 });
    client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5000 });
    netbox.contacts.set(1, { id: 1, name: 'Alice', email: 'alice@example.com' });
    netbox.assignments.push(
      { id: 1, objectType: 'dcim.site', objectId: 1, contactId: 1, role: OWNER, priority: 'primary' },
      // Same id, another type: a device 1 and a tenant 1 are not site 1.
      { id: 2, objectType: 'dcim.device', objectId: 1, contactId: 1, role: OWNER, priority: 'primary' },
      { id: 3, objectType: 'tenancy.tenant', objectId: 1, contactId: 1, role: OWNER, priority: 'primary' },
    );
    // Asked as a 3.x NetBox would be (content_type=), this 4.x double ignores the filter and lists all three.
    const found = await listContactAssignments(
      client,
      { major: 3, objectType: 'dcim.site', objectIds: [1], role: 'owner', priority: 'primary' },
      { deadline: Date.now() + 10_000 },
    );
    expect(found).toEqual([{ objectType: 'dcim.site', objectId: 1, contactId: 1, role: 'owner', priority: 'primary' }]);
    // Three pages of one were followed.
    expect(netbox.requests.filter((r) => r.path.startsWith('/api/tenancy/contact-assignments/'))).toHaveLength(3);
  });

  it('asks once per report within the TTL, and again after it; a failure is not kept', async () => {
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5000, maxAttempts: 1 });
    netbox.devices.set(5, { id: 5, name: 'sw-5', site: SITE, role: { id: 2, name: 'Core', slug: 'core' } });
    // The TTL (10 minutes) is measured on the resolver's clock, moved forward by hand (the budget stays real time ahead).
    let skew = 0;
    const resolver = createOwnerResolver({ client, budgetMs: 10_000, clock: { now: () => Date.now() + skew } });
    const query = [{ role: 'owner', on: ['site'] as const }];
    const devicesAsked = () => netbox.requests.filter((r) => r.path.startsWith('/api/dcim/devices/')).length;
    const first = await resolver('report-1', '/api/plugins/validity/test-results/?report_id=1').lookup([5], query);
    expect(first).toMatchObject({ status: 'ok', devices: [{ id: 5, site: { slug: 'fra1' } }] });
    await resolver('report-1', '/api/plugins/validity/test-results/?report_id=1').lookup([5], query);
    expect(devicesAsked()).toBe(1);
    skew += 601_000;
    await resolver('report-1', '/api/plugins/validity/test-results/?report_id=1').lookup([5], query);
    expect(devicesAsked()).toBe(2);
    netbox.failNext.push(500);
    skew += 601_000;
    expect(await resolver('report-1', '/x/').lookup([5], query)).toMatchObject({ status: 'missing', code: 'SERVER' });
    expect(await resolver('report-1', '/x/').lookup([5], query)).toMatchObject({ status: 'ok' });
  });
});

import type { OwnerContact } from '../../src/enrichment';
import type { NetboxDevice } from '../../src/netbox';
import {
  buildOwnerGroups,
  MAX_OWNER_RECIPIENTS,
  parseContactAddress,
  parseRoutesFile,
  RoutesFileError,
  type OwnerSpec,
} from '../../src/routing';

/** Recipients taken from NetBox's contacts: one plain address per field, allowed domains only, a bounded To. */

function ownersRoute(lines: string[]): string {
  return [
    'routes:',
    '  - name: owners',
    '    to:',
    '      netbox_contacts: { role: owner }',
    '      fallback: noc@example.com',
    ...lines,
    '',
  ].join('\n');
}

function messagesOf(text: string): string[] {
  try {
    parseRoutesFile(text, 'routes.yaml');
  } catch (error) {
    if (error instanceof RoutesFileError) return error.issues.map((i) => `${i.where}: ${i.message}`);
    throw error;
  }
  throw new Error('expected the routes file to be rejected');
}

const site = { id: 1, name: 'FRA1', slug: 'fra1' };
const devices: NetboxDevice[] = [{ id: 1, name: 'sw-1', site, tenant: null, role: null, platform: null, tags: [] }];
const failures = [{ device: 'sw-1', ids: { device: 1 }, severity: 'HIGH' as const }];
const spec = (allowedDomains: string[]): OwnerSpec => ({ role: 'owner', on: ['site'], fallback: ['noc@example.com'], allowedDomains });
const contacts = (...emails: string[]): OwnerContact[] =>
  emails.map((email, i) => ({
    objectType: 'dcim.site',
    objectId: 1,
    contactId: i + 1,
    contactName: `c${i}`,
    email,
    role: 'owner',
    priority: null,
  }));

describe('allowed_domains on a route to NetBox contacts', () => {
  it('is required, and "*" allows any domain only when written, alone', () => {
    expect(messagesOf(ownersRoute([]))).toEqual([
      'route 1 (owners) to.allowed_domains: must list the mail domains NetBox contacts may be at (example: [example.com]), or be "*" for any',
    ]);
    expect(messagesOf(ownersRoute(['      allowed_domains: ["*", example.com]']))).toEqual([
      'route 1 (owners) to.allowed_domains: "*" allows any domain: write it alone',
    ]);
    expect(messagesOf(ownersRoute(['      allowed_domains: [example.com, "x@y.com", "*.*.com"]']))).toEqual([
      'route 1 (owners) to.allowed_domains: "x@y.com" is not a domain (example.com or *.example.com)',
      'route 1 (owners) to.allowed_domains: "*.*.com" is not a domain (example.com or *.example.com)',
    ]);
    const [route] = parseRoutesFile(ownersRoute(['      allowed_domains: [Example.COM, "*.example.org"]']), 'routes.yaml');
    expect(route.owners?.allowedDomains).toEqual(['example.com', '*.example.org']);
  });

  it('mails a contact in an allowed domain (exactly, or a subdomain under "*."), and any domain with "*"', () => {
    const keyed = (domains: string[], ...emails: string[]) =>
      buildOwnerGroups('owners', spec(domains), failures, devices, contacts(...emails)).groups.map(
        (g) => `${g.key === 'unowned' ? 'fallback' : 'owner'}:${g.to.join(',')}`,
      );
    expect(keyed(['example.com'], 'a@example.com', 'b@eu.example.com')).toEqual(['fallback:noc@example.com', 'owner:a@example.com']);
    expect(keyed(['*.example.com'], 'a@example.com', 'b@eu.example.com')).toEqual(['fallback:noc@example.com', 'owner:b@eu.example.com']);
    expect(keyed(['example.com'], 'a@evilexample.com')).toEqual(['fallback:noc@example.com']);
    expect(keyed(['*'], 'a@example.com', 'b@outside.example')).toEqual(['owner:a@example.com,b@outside.example']);
  });
});

describe('a contact e-mail field gives at most one plain address', () => {
  it.each([
    'a@example.com, b@example.com',
    'a@example.com; b@example.com',
    'team: a@example.com, b@example.com;',
    '"ceo@example.com" <x@outside.example>',
    'Ceo <ceo@example.com>',
    'owner1@example.com\r\nBcc: y@outside.example',
    'a@example.com\u0000',
    'a b@example.com',
    'a@example.com.',
    'a@exa_mple.com',
    '@example.com',
    'a@',
    'ä@example.com',
    `${'a'.repeat(65)}@example.com`,
  ])('refuses %j', (value) => {
    expect(parseContactAddress(value)).toMatchObject({ ok: false, reason: expect.stringContaining('is not one plain e-mail address') });
    const { groups, refused } = buildOwnerGroups('owners', spec(['*']), failures, devices, contacts(value));
    expect(groups.map((g) => g.to)).toEqual([['noc@example.com']]);
    expect(refused).toEqual([expect.stringContaining('(contact of site fra1): is not one plain e-mail address')]);
    expect(groups[0].note).toMatch(/^Not mailed: ".*" \(contact of site fra1\): is not one plain e-mail address/);
  });

  it("takes a plain address, dot-atom local parts and subdomains; the domain's case is not the owner's", () => {
    expect(parseContactAddress('first.last+tag@Mail.Example.com')).toEqual({
      ok: true,
      address: 'first.last+tag@Mail.Example.com',
      domain: 'mail.example.com',
    });
  });
});

describe('recipients per owner mail are capped', () => {
  it(`an object with more than ${MAX_OWNER_RECIPIENTS} contacts is mailed to the fallback, which is told why`, () => {
    const many = Array.from({ length: MAX_OWNER_RECIPIENTS + 1 }, (_, i) => `o${i}@example.com`);
    const { groups } = buildOwnerGroups('owners', spec(['example.com']), failures, devices, contacts(...many));
    expect(groups.map((g) => g.to)).toEqual([['noc@example.com']]);
    expect(groups[0].note).toBe(
      `Not mailed: the ${MAX_OWNER_RECIPIENTS + 1} contacts of site fra1: more than ${MAX_OWNER_RECIPIENTS} for one mail.`,
    );
    const enough = buildOwnerGroups('owners', spec(['example.com']), failures, devices, contacts(...many.slice(0, MAX_OWNER_RECIPIENTS)));
    expect(enough.groups.map((g) => g.to.length)).toEqual([MAX_OWNER_RECIPIENTS]);
  });
});

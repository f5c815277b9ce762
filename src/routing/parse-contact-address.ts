/**
 * A NetBox contact's `email` is written by anyone who may edit contacts, and a mail library reads it as an address list
 * (lists, groups, display names, CR LF each add or disguise recipients): so one field gives at most one plain ASCII
 * `local@domain` (RFC 5321 dot-atom, LDH labels), or nothing.
 */

/** RFC 5322 `atext`: the characters of a dot-atom local part (no quotes, brackets, commas, colons, spaces). */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** One DNS label: letters, digits and inner hyphens, at most 63 characters (RFC 1035). */
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** RFC 5321's limits: 64 octets of local part, 254 of the whole path. */
const MAX_LOCAL_PART_CHARS = 64;
const MAX_ADDRESS_CHARS = 254;

/** One plain address with its domain in lower case, or why the field is not one. */
export type ContactAddress = { ok: true; address: string; domain: string } | { ok: false; reason: string };

/** Parses a contact's `email` field strictly: exactly one plain address, or a reason saying what it is instead. Pure. */
export function parseContactAddress(value: string): ContactAddress {
  const refuse = (why: string): ContactAddress => ({ ok: false, reason: `is not one plain e-mail address (${why})` });
  if (value.length > MAX_ADDRESS_CHARS) return refuse(`longer than ${MAX_ADDRESS_CHARS} characters`);
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return refuse('no local@domain');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > MAX_LOCAL_PART_CHARS || !LOCAL_PART.test(local))
    return refuse('a list, a name or a character outside a plain local part');
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) return refuse('the domain is not a host name');
  return { ok: true, address: value, domain: domain.toLowerCase() };
}

/** Whether `allowed_domains` lets `domain` (lower case) be mailed: `*` any, `example.com` exactly, `*.example.com` its subdomains. */
export function isDomainAllowed(domain: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => (entry === '*' ? true : entry.startsWith('*.') ? domain.endsWith(entry.slice(1)) : domain === entry));
}

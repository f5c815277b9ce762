import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** Reusable zod fields for environment variables and the routes file (all arrive as strings; unset means default). */
export const positiveInt = (def: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(1).max(max).default(def);

export const nonNegativeInt = (def: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(0).max(max).default(def);

export const bool = (def: boolean) => z.stringbool({ truthy: ['true', '1', 'yes', 'on'], falsy: ['false', '0', 'no', 'off'] }).default(def);

const splitList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A comma-separated list of e-mail addresses (display names allowed: `Ops <ops@example.com>`). */
export const addressList = z
  .string()
  .transform(splitList)
  .pipe(z.array(z.string().refine(isMailbox, 'is not an e-mail address')));

export const address = z.string().trim().refine(isMailbox, 'is not an e-mail address');

/** `user@domain` or `Name <user@domain>`; no CR/LF (they would reach a header). */
export function isMailbox(value: string): boolean {
  if (/[\r\n]/.test(value)) return false;
  const m = /^(?:[^<>]*<([^<>\s]+)>|([^<>\s]+))$/.exec(value.trim());
  const addr = m?.[1] ?? m?.[2];
  return !!addr && /^[^@\s]+@[^@\s]+$/.test(addr);
}

/** A duration with its unit (`500ms`, `30s`, `15m`, `24h`, `7d`, `2w`): a bare `24` meant as hours would be 24 ms. */
export const duration = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const ms = parseDurationMs(value);
    if (ms !== undefined) return ms;
    const message = /^\d+(?:\.\d+)?$/.test(value)
      ? 'has no unit: write it with one, e.g. 24h (ms, s, m, h, d or w); a bare number is not taken as milliseconds'
      : 'is not a duration (examples: 30s, 15m, 24h, 7d)';
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });

/** `value` (a number with its unit: ms, s, m, h, d, w) in milliseconds; undefined without a unit or above the safe range. */
export function parseDurationMs(value: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/.exec(value.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 'ms'];
  const ms = Math.round(n * unit);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
}

/** The shortest webhook secret accepted: a short one can be guessed from the signatures NetBox sends. */
const MIN_WEBHOOK_SECRET_LENGTH = 16;

/** Why a webhook secret is refused for its length, or undefined when it is long enough. */
export function describeShortWebhookSecret(secret: string): string | undefined {
  if (secret.length >= MIN_WEBHOOK_SECRET_LENGTH) return undefined;
  return `is ${secret.length} characters; a webhook secret needs at least ${MIN_WEBHOOK_SECRET_LENGTH}: generate one with \`openssl rand -hex 32\` and give the same to NetBox's webhook`;
}

export const httpUrl = z
  .string()
  .trim()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http:// or https:// URL');

/** A comma-separated list of IP addresses or CIDR ranges, as CIDR strings; refused empty: it would lock every sender out. */
export const cidrList = z.string().transform((value, ctx) => {
  const items = splitList(value);
  if (items.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'is empty: leave it unset to allow every address' });
    return z.NEVER;
  }
  const out: string[] = [];
  for (const item of items) {
    const cidr = parseCidr(item);
    if (cidr === undefined)
      ctx.addIssue({ code: 'custom', message: `"${item}" is not an IP address or CIDR range (examples: 10.0.0.0/8, 2001:db8::/32)` });
    else out.push(cidr);
  }
  return out;
});

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or range, as a CIDR string; undefined when invalid. */
export function parseCidr(value: string): string | undefined {
  try {
    if (value.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(value);
      return `${addr.toString()}/${bits}`;
    }
    const addr = ipaddr.parse(value);
    return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    return undefined;
  }
}

/** True when HOST only accepts connections from this machine (`localhost`, 127.0.0.0/8, `::1`, also IPv4-mapped). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (h === 'localhost') return true;
  try {
    let addr = ipaddr.parse(h);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    return addr.range() === 'loopback';
  } catch {
    return false;
  }
}

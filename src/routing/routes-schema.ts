import { z } from 'zod';
import { duration, isMailbox } from '../shared';
import { parseDigestSchedule } from './digest-schedule';

/** Severities a condition can name; `overall` is the total over all three. */
export const ROUTE_SEVERITIES = ['HIGH', 'MIDDLE', 'LOW', 'overall'] as const;
export type RouteSeverity = (typeof ROUTE_SEVERITIES)[number];

const NOTIFY_POLICIES = ['always', 'on-failure', 'on-change'] as const;

/** A routes file is configuration, not data: bounds stop a typo from building a monster. */
const MAX_ROUTES = 100;
const MAX_CONDITION_ITEMS = 50;
const MAX_RECIPIENTS = 100;

const flag = z.boolean({ error: 'must be true or false' });
const severity = z.enum(ROUTE_SEVERITIES);
const percent = z.number({ error: 'must be a number of percent (0–100)' }).min(0).max(100);
// Each check says what is wrong: -1 is a whole number, it is below 0.
const nonNegative = z
  .number({ error: 'must be a whole number (0 or more)' })
  .int('must be a whole number (0 or more)')
  .min(0, 'must be 0 or more')
  .max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`);

function oneOrList<T extends z.ZodType>(item: T, max: number, error: string) {
  return z.union([item, z.array(item).min(1).max(max)], { error }).transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);
}

/** Against the previous report: the pass percentage dropped more than `drop_above` points, or (newly_failing) a pair started failing. */
const RegressionCondition = z
  .strictObject({ severity: severity.default('overall'), drop_above: percent.optional(), newly_failing: flag.optional() })
  .transform((c) => ({ ...c, newly_failing: c.newly_failing ?? c.drop_above === undefined }));

const scalar = z.union([z.string().max(500), z.number(), z.boolean(), z.null()], { error: 'must be a string, number, boolean or null' });

/** `custom_field: { name: owner, equals: netops }` (or `in: [a, b]`, or `present: true`). */
const CustomFieldCondition = z
  .strictObject({
    name: z.string({ error: 'must be the custom field name' }).min(1).max(200),
    equals: scalar.optional(),
    in: z.array(scalar).min(1).max(MAX_CONDITION_ITEMS).optional(),
    present: z.boolean().optional(),
  })
  .refine((c) => [c.equals !== undefined, c.in !== undefined, c.present !== undefined].filter(Boolean).length === 1, {
    message: 'give exactly one of equals, in, present',
  });

/** NetBox source names (SOURCES_FILE; `default` is the one configured from NETBOX_URL/WEBHOOK_*). */
export const SOURCE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const sourceName = z.string().regex(SOURCE_NAME_PATTERN, 'must be a source name (1–32 lower-case letters, digits, "-" or "_")');

const slugList = oneOrList(z.string().min(1).max(200), MAX_CONDITION_ITEMS, 'must be a name (slug) or a list of them');

/** A failing device with these NetBox attributes (every field must match; a list: any of its values; `tags`: every tag). */
const DeviceCondition = z
  .strictObject({
    site: slugList.optional(),
    tenant: slugList.optional(),
    role: slugList.optional(),
    platform: slugList.optional(),
    tags: slugList.optional(),
  })
  .refine((d) => Object.values(d).some((v) => v !== undefined), 'give at least one of site, tenant, role, platform, tags');

const CONDITION_KEYS = ['failed', 'pass_percent', 'regression', 'custom_field', 'source', 'source_tags', 'device', 'all', 'any'] as const;

/** One condition: exactly one key. `all`/`any` nest. */
const ConditionSchema = z
  .strictObject({
    /** `failed: { severity: HIGH, above: 0 }`: more than `above` results of that severity failed. */
    failed: z.strictObject({ severity: severity.default('overall'), above: nonNegative }).optional(),
    /** `pass_percent: { severity: overall, below: 90 }`: the pass percentage (as NetBox shows it) is below. */
    pass_percent: z.strictObject({ severity: severity.default('overall'), below: percent }).optional(),
    regression: RegressionCondition.optional(),
    custom_field: CustomFieldCondition.optional(),
    /** `source: lab` or `source: [prod-eu, prod-us]`: the report came from one of these NetBox sources. */
    source: oneOrList(sourceName, MAX_CONDITION_ITEMS, 'must be a source name or a list of them').optional(),
    /** `source_tags: { env: prod }`: the report's source carries every one of these tags with these values. */
    source_tags: z
      .record(z.string().min(1).max(100), z.union([z.string().max(200), z.number(), z.boolean()]).transform(String))
      .refine((tags) => Object.keys(tags).length > 0, 'needs at least one tag')
      .optional(),
    device: DeviceCondition.optional(),
    get all() {
      return conditionList();
    },
    get any() {
      return conditionList();
    },
  })
  .superRefine((c, ctx) => {
    const keys = CONDITION_KEYS.filter((k) => c[k] !== undefined);
    const got = keys.length ? keys.join(', ') : 'none';
    if (keys.length !== 1)
      ctx.addIssue({ code: 'custom', message: `a condition has exactly one of ${CONDITION_KEYS.join(', ')} (got ${got})` });
  });
export type Condition = z.infer<typeof ConditionSchema>;
const conditionList = (): z.ZodOptional<z.ZodArray<typeof ConditionSchema>> =>
  z.array(ConditionSchema).min(1).max(MAX_CONDITION_ITEMS).optional();

/** Addresses (or domains) as a YAML list or one comma-separated string. */
const splitList = (v: string | string[]) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean);
const addressList = z.union([z.string(), z.array(z.string())], { error: 'must be an address or a list of addresses' }).transform(splitList);
const mailbox = z.string().refine(isMailbox, 'is not an e-mail address');
const recipients = addressList.pipe(z.array(mailbox).max(MAX_RECIPIENTS)).default([]);

/** Objects a contact can be assigned to that own a device: the device itself, its site, its tenant. */
const OWNER_OBJECTS = ['device', 'site', 'tenant'] as const;
const CONTACT_PRIORITIES = ['primary', 'secondary', 'tertiary', 'inactive'] as const;

/** `netbox_contacts: { role: owner, on: [device, site, tenant], priority: primary }`. */
const NetboxContacts = z.strictObject({
  role: z
    .string({ error: "must be the contact role's slug (e.g. owner)" })
    .regex(/^[-a-zA-Z0-9_]{1,100}$/, "must be the contact role's slug (e.g. owner)"),
  on: oneOrList(z.enum(OWNER_OBJECTS), 3, `must be one or more of ${OWNER_OBJECTS.join(', ')}`)
    .transform((v) => [...new Set(v)])
    .default(['device', 'site', 'tenant']),
  priority: z.enum(CONTACT_PRIORITIES, { error: `must be one of ${CONTACT_PRIORITIES.join(', ')}` }).optional(),
});

/** One `allowed_domains` entry: a host name (`example.com`) or its subdomains (`*.example.com`). */
const DOMAIN_PATTERN = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Where NetBox's contacts may be mailed (`"*"`: anywhere). Required: else whoever edits a NetBox contact picks who gets the failures. */
const AllowedDomains = z
  .union([z.string(), z.array(z.string()).min(1).max(MAX_RECIPIENTS)], {
    error: 'must list the mail domains NetBox contacts may be at (example: [example.com]), or be "*" for any',
  })
  .transform((v) => splitList(v).map((s) => s.toLowerCase()))
  .superRefine((domains, ctx) => {
    if (domains.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one domain, or "*" for any' });
    if (domains.includes('*') && domains.length > 1) ctx.addIssue({ code: 'custom', message: '"*" allows any domain: write it alone' });
    for (const d of domains) {
      if (d !== '*' && !DOMAIN_PATTERN.test(d))
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(d)} is not a domain (example.com or *.example.com)` });
    }
  });

/**
 * NetBox's contacts of each failing device in an allowed domain; `fallback` gets the failures nobody may be mailed
 * about, and the whole report when NetBox cannot say who owns what.
 */
export const OwnersTo = z
  .strictObject({
    netbox_contacts: NetboxContacts,
    allowed_domains: AllowedDomains,
    fallback: addressList.pipe(z.array(mailbox).min(1, 'needs at least one address').max(MAX_RECIPIENTS)),
  })
  .transform(({ netbox_contacts: { role, on, priority }, fallback, allowed_domains }) => ({
    role,
    on,
    fallback,
    allowedDomains: allowed_domains,
    ...(priority === undefined ? {} : { priority }),
  }));

/** A route's owner look-up (`allowedDomains` lower-cased; each object in `on` naming someone owns the device). */
export type OwnerSpec = z.output<typeof OwnersTo>;

/** `to`: addresses, or NetBox's contacts (an object): each problem reported for the form that was written. */
const routeTo = z.unknown().transform((value, ctx) => {
  const schema = value !== null && typeof value === 'object' && !Array.isArray(value) ? OwnersTo : recipients;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

/** Whether this Node knows the IANA time zone. UTC skips Intl: a formatter pages in ~6 MB of ICU data a UTC relay never needs. */
export function isTimeZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** One digest per period instead of one mail per report: a croner expression; the time zone defaults to MAIL_TIMEZONE. */
const DigestSchema = z
  .strictObject({
    schedule: z.string({ error: 'must be a cron expression (example: "0 8 * * MON")' }).min(1).max(200),
    timezone: z.string().refine(isTimeZone, 'is not a time zone name this Node knows (examples: UTC, Europe/Berlin)').optional(),
  })
  .superRefine((d, ctx) => {
    try {
      // Validity does not depend on the zone (checked on its own above).
      parseDigestSchedule(d.schedule, 'UTC');
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: `is not a cron expression: ${(error as Error).message}` });
    }
  });

/** Route names appear in Message-IDs and headers: keep them to a safe token. */
const ROUTE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const RouteSchema = z
  .strictObject({
    name: z
      .string({ error: 'is required (letters, digits, - _ .)' })
      .regex(ROUTE_NAME_PATTERN, 'must be 1–64 letters, digits, "-", "_" or ".", starting with a letter or digit'),
    match: ConditionSchema.optional(),
    to: routeTo,
    cc: recipients,
    bcc: recipients,
    template: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must be the name of a folder under the templates directory')
      .optional(),
    subject: z.string().min(1).max(500).optional(),
    /** The Reply-To of this route's mails (reports and digests), instead of MAIL_FROM. */
    reply_to: z.string({ error: 'must be an e-mail address' }).trim().refine(isMailbox, 'is not an e-mail address').optional(),
    notify: z.enum(NOTIFY_POLICIES).default('always'),
    repeat_after: z.union([z.string(), z.number()]).transform(String).pipe(duration).optional(),
    continue: flag.default(false),
    /** false: this route's mails go without the trend chart; absent: with it. */
    chart: flag.optional(),
    /** true: report mails carry the CSV of the failing results (an owner group's mail, its own share). */
    attach_csv: flag.optional(),
    digest: DigestSchema.optional(),
  })
  // A digest route takes no part in the per-report chain: what only means something there is refused, not ignored.
  // Checked before the transform, which zod skips once a field has a problem, so every problem is listed.
  .superRefine((r, ctx) => {
    if (!r.digest) return;
    const refuse = (path: string[], why: string) =>
      ctx.addIssue({ code: 'custom', path, message: `does not apply to a digest route (${why})` });
    if (!Array.isArray(r.to)) refuse(['to', 'netbox_contacts'], 'a digest goes to fixed addresses');
    if (r.notify !== 'always') refuse(['notify'], 'its digest covers every matching report');
    if (r.continue) refuse(['continue'], 'it never stops the per-report routes after it');
    if (r.attach_csv) refuse(['attach_csv'], "a digest attaches no report's CSV");
  })
  .transform(({ to, ...rest }): typeof rest & { to: string[]; owners?: OwnerSpec } =>
    Array.isArray(to) ? { ...rest, to } : { ...rest, to: [], owners: to },
  )
  .superRefine((r, ctx) => {
    if (r.to.length + r.cc.length + r.bcc.length === 0 && !r.owners)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'a route needs at least one recipient (to, cc or bcc)' });
    if (r.repeat_after !== undefined && r.notify !== 'on-change')
      ctx.addIssue({
        code: 'custom',
        path: ['repeat_after'],
        message: 'only applies to notify: on-change (the other policies never hold a mail back)',
      });
  });

export const RoutesFileSchema = z.strictObject({
  routes: z.array(RouteSchema, { error: 'must be a list of routes' }).min(1, 'needs at least one route').max(MAX_ROUTES),
});

/** One route as the relay uses it (recipients split, durations in ms). */
export type Route = z.infer<typeof RouteSchema>;

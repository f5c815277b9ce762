/**
 * The key tables of docs/routes.md and docs/sources.md, read from the zod schemas of the routes file
 * (src/routing/routes-schema.ts) and the sources file (src/config/sources-file.ts): each key, whether it is
 * required, its default and its allowed values come from the schema; its meaning from {@link ROUTES_KEYS} and
 * {@link SOURCES_KEYS}. A key the schema has and the meanings lack (or the reverse) stops the generation.
 * `npm run docs:keys` writes them; test/unit/file-key-docs.test.ts fails when a page is stale.
 */
import { z } from 'zod';
import { SourcesFileSchema } from '../src/config';
import { OwnersTo, RoutesFileSchema } from '../src/routing';

/** A JSON Schema node, as zod writes it (only what the tables read). */
interface JsonNode {
  type?: string | string[];
  properties?: Record<string, JsonNode>;
  required?: string[];
  items?: JsonNode;
  anyOf?: JsonNode[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  not?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonNode>;
}

/** What a page says of a key beyond the schema. */
export interface KeyMeaning {
  meaning: string;
  /** The default in words, when the schema has none to show (derived from a setting or another key). */
  defaultText?: string;
  /** The allowed values in words, when the schema's type cannot say them (a duration, a cron expression). */
  allowedText?: string;
}

/** One row of a key table. */
export interface KeyDoc extends KeyMeaning {
  key: string;
  required: boolean;
  default?: string;
  allowed?: string;
}

/** The keys of one YAML file: accepted by the schema, but refused or no longer read (listed under the table). */
export interface FileKeys {
  /** The page, its markers' name and the schema's file, for the markers. */
  page: string;
  name: string;
  from: string;
  schema: JsonNode;
  /** Where the keys of one entry start: `routes` (a list) holds each route's keys. */
  listKey: string;
  meanings: Record<string, KeyMeaning>;
  /** Keys the schema accepts only to refuse them, or to warn that they are no longer read: not in the table. */
  outside: Record<string, string>;
}

const SEVERITY = '`HIGH`, `MIDDLE`, `LOW` or `overall` (the total over all three)';
const DURATION = 'a duration: `30m`, `24h`, `7d`';

/** The meaning of each key of a route (`name`), of its conditions (`match.…`) and of its owners (`to.…`). */
export const ROUTES_KEYS: Record<string, KeyMeaning> = {
  routes: { meaning: 'The routes, tried in order: a report goes to the first that matches, and on while they say `continue: true`.' },
  name: {
    meaning: "The route's name, in its mails' Message-ID, thread and `X-Compliance-Route` header.",
    allowedText: '1–64 of `A-Z a-z 0-9 - _ .`',
  },
  match: { meaning: 'The condition a report must meet for this route: exactly one of the `match.*` keys below. Absent: every report.' },
  'match.failed': { meaning: 'More than `above` results of `severity` failed.' },
  'match.failed.severity': { meaning: `The severity counted: ${SEVERITY}.` },
  'match.failed.above': { meaning: 'The number of failed results to exceed.' },
  'match.pass_percent': { meaning: 'The pass percentage, as NetBox shows it, is below `below`. A severity with no results never matches.' },
  'match.pass_percent.severity': { meaning: `The severity whose percentage is read: ${SEVERITY}.` },
  'match.pass_percent.below': { meaning: 'The percentage to fall below.' },
  'match.regression': {
    meaning: 'Against the previous report of the source: the percentage fell, or something newly fails. Never true for a first report.',
  },
  'match.regression.severity': { meaning: `The severity compared: ${SEVERITY}.` },
  'match.regression.drop_above': { meaning: 'True when the percentage fell by more than this many points.' },
  'match.regression.newly_failing': {
    meaning: 'True when a test fails on a device where it passed before.',
    defaultText: '`true` without `drop_above`, else `false`',
  },
  'match.custom_field': { meaning: "The report's custom field: exactly one of `equals`, `in`, `present`. Select fields compare by value." },
  'match.custom_field.name': { meaning: "The custom field's name." },
  'match.custom_field.equals': {
    meaning: 'The value it equals.',
    allowedText: 'text (at most 500 characters), a number, `true`, `false` or `null`',
  },
  'match.custom_field.in': { meaning: 'The values it may equal.' },
  'match.custom_field.present': { meaning: '`true`: the field has a value; `false`: it has none.' },
  'match.source': {
    meaning: 'The report came from this NetBox source, or one of these (`default`: the one of `NETBOX_URL`). An unknown name is refused.',
    allowedText: 'a source name, or a list of 1–50',
  },
  'match.source_tags': {
    meaning: "The report's source carries every one of these tags with these values (`{ env: prod }`).",
    allowedText: 'a map of tag: value',
  },
  'match.device': {
    meaning:
      "A failing device has every attribute given; the route's mail then holds only those devices' failures. Needs `NETBOX_URL` and `NETBOX_TOKEN`.",
  },
  'match.device.site': { meaning: "The device's site (NetBox slug or name).", allowedText: 'a name, or a list of 1–50: any of them' },
  'match.device.tenant': { meaning: "The device's tenant.", allowedText: 'a name, or a list of 1–50: any of them' },
  'match.device.role': { meaning: "The device's role.", allowedText: 'a name, or a list of 1–50: any of them' },
  'match.device.platform': { meaning: "The device's platform.", allowedText: 'a name, or a list of 1–50: any of them' },
  'match.device.tags': { meaning: "The device's tags.", allowedText: 'a tag, or a list of 1–50: each of them' },
  'match.all': { meaning: 'Every nested condition holds.', allowedText: 'a list of 1–50 conditions' },
  'match.any': { meaning: 'At least one nested condition holds.', allowedText: 'a list of 1–50 conditions' },
  to: {
    meaning: "The recipients: addresses, or NetBox's contacts of the failing devices (the `to.*` keys below).",
    allowedText: 'an address, a list of up to 100 or a comma-separated string; or an object',
  },
  'to.netbox_contacts': { meaning: "Mail each failing device's owners, as NetBox's contact assignments name them." },
  'to.netbox_contacts.role': { meaning: "The contact role's slug (`owner`).", allowedText: '1–100 of `A-Z a-z 0-9 - _`' },
  'to.netbox_contacts.on': {
    meaning:
      "The objects whose contacts own a device: a device joins the group of each one that names someone (its site's and its tenant's owners may both get it).",
    defaultText: '`[device, site, tenant]`',
    allowedText: '`device`, `site`, `tenant`: one, or a list',
  },
  'to.netbox_contacts.priority': { meaning: 'Only the assignments of this priority. Absent: any priority.' },
  'to.allowed_domains': {
    meaning:
      'The mail domains a contact may be at (`example.com`, `*.example.com`), or `"*"` alone for any. Others get nothing; their failures go to `fallback`.',
    allowedText: 'a domain, or a list of 1–100',
  },
  'to.fallback': {
    meaning: 'Gets the failures no allowed contact owns, and the whole report when NetBox cannot say who owns what.',
    allowedText: 'an address, or a list of 1–100',
  },
  cc: { meaning: 'Copy recipients.', defaultText: 'none', allowedText: 'like `to` (addresses only)' },
  bcc: { meaning: 'Blind copy recipients: in the envelope only.', defaultText: 'none', allowedText: 'like `to` (addresses only)' },
  template: {
    meaning: "A folder under the templates directory holding this route's `subject.hbs`, `html.hbs`, `text.hbs`.",
    defaultText: '`report` (`digest` on a digest route)',
    allowedText: '1–64 of `A-Z a-z 0-9 - _`',
  },
  subject: { meaning: "A Handlebars subject line replacing the template's.", allowedText: '1–500 characters' },
  reply_to: {
    meaning: "The Reply-To of this route's mails: where an answer goes instead of `MAIL_FROM`.",
    allowedText: 'an e-mail address',
  },
  notify: {
    meaning:
      "`always`; `on-failure`: only when something failed that is not an accepted exception; `on-change`: only when the failing set changed since the previous report (without NetBox's results: a severity's failed count).",
  },
  repeat_after: {
    meaning: 'With `notify: on-change`: mail an unchanged failing report again once this long has passed since the last mail.',
    allowedText: DURATION,
  },
  continue: { meaning: '`true`: a report this route matched goes on to the routes after it.' },
  chart: { meaning: "`false`: this route's mails go without the trend chart.", defaultText: '`true`' },
  attach_csv: { meaning: "`true`: this route's report mails carry the CSV of the failing results.", defaultText: '`false`' },
  digest: {
    meaning:
      'One mail per period instead of one per report. Refuses `netbox_contacts`, `notify` other than `always`, `continue` and `attach_csv`.',
  },
  'digest.schedule': {
    meaning: 'When the digest goes: a cron expression (five fields, or six with seconds first).',
    allowedText: '`0 8 * * MON`',
  },
  'digest.timezone': {
    meaning: 'The zone the schedule and the dates are read in; daylight saving is followed.',
    defaultText: '`MAIL_TIMEZONE`',
    allowedText: 'an IANA zone: `UTC`, `Europe/Berlin`',
  },
};

/** The meaning of each key of one source in SOURCES_FILE. */
export const SOURCES_KEYS: Record<string, KeyMeaning> = {
  sources: { meaning: 'The NetBox instances besides the `default` one (`NETBOX_URL`, `WEBHOOK_SECRET`).' },
  name: {
    meaning: "The source's name: it posts to `<WEBHOOK_PATH>/<name>`. `default` is taken.",
    allowedText: '1–32 of `a-z 0-9 - _`',
  },
  netbox_url: {
    meaning: "This NetBox's URL: links, failing results, catch-up. Required with a token or a CA file.",
    allowedText: 'an `http(s)://` URL',
  },
  token_file: { meaning: 'A file holding its API token (trailing newline dropped).', allowedText: 'a path' },
  token_env: { meaning: 'The environment variable holding its API token.', allowedText: 'a variable name' },
  webhook_secret_file: { meaning: 'A file holding its webhook secret.', allowedText: 'a path' },
  webhook_secret_env: { meaning: 'The environment variable holding its webhook secret.', allowedText: 'a variable name' },
  webhook_secret_previous_file: { meaning: 'During a rotation, a file holding the previous secret, accepted too.', allowedText: 'a path' },
  webhook_secret_previous_env: { meaning: 'During a rotation, the variable holding the previous secret.', allowedText: 'a variable name' },
  ca_file: {
    meaning: 'The private CA (or self-signed certificate) of this NetBox, PEM. Its certificate is always verified.',
    allowedText: 'a path',
  },
  allowed_ips: {
    meaning: 'The client addresses that may post to its path. Absent: every address.',
    allowedText: 'a list of 1–100 addresses or CIDR ranges',
  },
  tags: { meaning: 'Free labels routes match with `source_tags`.', allowedText: 'a map of tag: value' },
  expect_report_every: {
    meaning: 'The watchdog mails when this source sends no report for this long. Absent: not watched.',
    allowedText: DURATION,
  },
  catch_up_every: {
    meaning: "How often its NetBox's reports are listed for those whose webhook never arrived.",
    defaultText: '`CATCH_UP_EVERY`',
    allowedText: `${DURATION}, or \`off\``,
  },
};

/** The routes file: the route keys, with the owners form of `to` (an object the schema reads in a transform). */
export const ROUTES_FILE: FileKeys = {
  page: 'docs/routes.md',
  name: 'routes file keys',
  from: 'src/routing/routes-schema.ts',
  schema: withOwners(toJson(RoutesFileSchema)),
  listKey: 'routes',
  meanings: ROUTES_KEYS,
  outside: {},
};

export const SOURCES_FILE: FileKeys = {
  page: 'docs/sources.md',
  name: 'sources file keys',
  from: 'src/config/sources-file.ts',
  schema: toJson(SourcesFileSchema),
  listKey: 'sources',
  meanings: SOURCES_KEYS,
  outside: {
    token: 'refused: secrets are only referenced (`token_file`, `token_env`)',
    webhook_secret: 'refused: secrets are only referenced (`webhook_secret_file`, `webhook_secret_env`)',
    catch_up_max: 'no longer read, with a warning: a catch-up mails at most 20 missed reports of a source',
  },
};

/** The input side: keys, defaults and bounds as a user writes them. */
function toJson(schema: z.ZodType): JsonNode {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonNode;
}

/** `to` is either form, chosen in a transform the JSON Schema cannot show: give it the owners form's keys. */
function withOwners(file: JsonNode): JsonNode {
  const route = file.properties!.routes.items!;
  route.properties!.to = { ...toJson(OwnersTo), type: undefined };
  return file;
}

/** Every key of the file, depth first, as `parent.child`; a key that refers back to a condition is not entered again. */
export function listFileKeys(file: FileKeys): KeyDoc[] {
  const rows: KeyDoc[] = [];
  const defs = file.schema.$defs ?? {};
  const visit = (node: JsonNode, prefix: string, seen: Set<string>) => {
    for (const [name, raw] of Object.entries(node.properties ?? {})) {
      if (name in file.outside && prefix === '') continue;
      const key = prefix + name;
      const child = raw.$ref ? defs[raw.$ref.split('/').pop()!] : raw;
      rows.push({ key, required: (node.required ?? []).includes(name), ...describeNode(child), ...meaningOf(file, key) });
      const ref = raw.$ref;
      if (ref && seen.has(ref)) continue;
      visit(child, `${key}.`, ref ? new Set([...seen, ref]) : seen);
    }
  };
  const list = file.schema.properties![file.listKey];
  rows.push({ key: file.listKey, required: true, ...describeNode(list), ...meaningOf(file, file.listKey) });
  visit(list.items!, '', new Set());
  const listed = new Set(rows.map((r) => r.key));
  const unknown = Object.keys(file.meanings).filter((key) => !listed.has(key));
  if (unknown.length > 0) throw new Error(`${file.page}: meanings for keys the schema does not have: ${unknown.join(', ')}`);
  return rows;
}

function meaningOf(file: FileKeys, key: string): KeyMeaning {
  const meaning = file.meanings[key];
  if (!meaning) throw new Error(`${file.page}: the key ${key} of ${file.from} has no meaning in scripts/file-key-tables.ts`);
  return meaning;
}

/** The default and the allowed values the schema itself states. */
function describeNode(node: JsonNode): Pick<KeyDoc, 'default' | 'allowed'> {
  const value = node.default;
  return {
    default: value === undefined ? undefined : `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``,
    allowed: describeAllowed(node),
  };
}

function describeAllowed(node: JsonNode): string | undefined {
  if (node.enum) return node.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (node.type === 'boolean') return '`true`, `false`';
  if (node.type === 'integer' || node.type === 'number') {
    const max = node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
    const kind = node.type === 'integer' ? 'a whole number' : 'a number';
    return max !== undefined ? `${kind}, ${node.minimum ?? 0}–${max}` : `${kind}, ≥ ${node.minimum ?? 0}`;
  }
  if (node.type === 'array' && node.minItems !== undefined) return `a list of ${node.minItems}–${node.maxItems ?? '…'}`;
  if (node.type === 'string' && node.maxLength !== undefined) return `text, at most ${node.maxLength} characters`;
  if (node.type === 'object' && node.properties) return 'an object';
  return undefined;
}

/** A table cell's text: a pipe would end the cell, and `<name>` outside a code span would read as an HTML tag. */
export function escapeCell(text: string): string {
  return text
    .split('`')
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('`')
    .replace(/\|/g, '\\|');
}

function markers(file: FileKeys): { begin: string; end: string } {
  return {
    begin: `<!-- ${file.name}: generated by \`npm run docs:keys\` from ${file.from} -->`,
    end: `<!-- end of the generated ${file.name} -->`,
  };
}

/** The table of one file's keys, between its markers. */
export function renderKeyTable(file: FileKeys): string {
  const rows = listFileKeys(file).map((k) => {
    const byDefault = k.default ?? k.defaultText ?? (k.required ? '(required)' : '—');
    const allowed = k.allowedText ?? k.allowed ?? '';
    return `| \`${k.key}\` | ${byDefault} | ${escapeCell(allowed)} | ${escapeCell(k.meaning)} |`;
  });
  const outside = Object.entries(file.outside).map(([key, why]) => `\`${key}\`: ${why}`);
  const { begin, end } = markers(file);
  return [
    begin,
    '',
    '| Key | Default | Allowed | Meaning |',
    '|---|---|---|---|',
    ...rows,
    ...(outside.length > 0 ? ['', `Accepted but not in this table: ${outside.join('; ')}.`] : []),
    '',
    end,
  ].join('\n');
}

/** Replaces the generated block of the file's page; the text around the markers stays as written. */
export function replaceKeyTable(page: string, file: FileKeys): string {
  const { begin, end } = markers(file);
  const from = page.indexOf(begin);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file.page} has lost its ${file.name} markers`);
  return page.slice(0, from) + renderKeyTable(file) + page.slice(to + end.length);
}

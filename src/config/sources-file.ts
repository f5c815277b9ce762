import path from 'node:path';
import { z } from 'zod';
import { parseYamlListFile, readYamlListFile, SOURCE_NAME_PATTERN } from '../routing';
import { describeShortWebhookSecret, duration, httpUrl, parseCidr, readSecretFile, type ConfigIssue } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { catchUpEvery, type Settings } from './schema';

/** Sources one relay serves at most: each one is a route, a NetBox client and a metrics label value. */
const MAX_SOURCES = 50;

/** Missed reports mailed one by one per catch-up, the newest: a day's outage at hourly reports; one notice names the rest. */
export const CATCH_UP_MAX_MAILED = 20;

/** One NetBox instance the relay receives reports from and enriches them with. */
export interface SourceConfig {
  name: string;
  /** The webhook path this source posts to: WEBHOOK_PATH itself for the default, `<WEBHOOK_PATH>/<name>` otherwise. */
  path: string;
  /** Current secret first, then the previous one during a rotation; empty when unsigned. */
  secrets: string[];
  /** CIDR ranges allowed to post to this source's path; undefined: every address. */
  allowedIps?: string[];
  netbox: { url?: string; token?: string; caFile?: string };
  /** Free labels routes can match on (`source_tags: { env: prod }`). */
  tags: Record<string, string>;
  /** Fetching the reports whose webhook never arrived: every `everyMs` (null: off), at most `max` mailed per run ({@link planCatchUp}). */
  catchUp: { everyMs: number | null; max: number };
  /** The watchdog's cadence for this source (`expect_report_every`; EXPECT_REPORT_EVERY for the default); undefined: not watched. */
  expectEveryMs?: number;
}

/** A secret given by reference only (SOURCES_FILE is meant to be committed): `<field>_file` (a path) or `<field>_env`. */
const secretRef = z.string().trim().min(1).max(1000);
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable');
const cidr = z.string().refine((v) => parseCidr(v) !== undefined, 'is not an IP address or CIDR range (examples: 10.0.0.0/8)');
const inlineSecret = z.never({ error: 'secrets are never written in SOURCES_FILE: give token_file or token_env instead' });
/** A YAML value (`24h`, or a bare number for `schema` to refuse) as text for `schema`. */
const asText = <T extends z.ZodType<unknown, string>>(schema: T, error: string) =>
  z.union([z.string(), z.number()], { error }).transform(String).pipe(schema);

const SourceSchema = z.strictObject({
  name: z
    .string({ error: 'is required (lower-case letters, digits, - _)' })
    .regex(SOURCE_NAME_PATTERN, 'must be 1–32 lower-case letters, digits, "-" or "_", starting with a letter or digit')
    .refine((n) => n !== DEFAULT_SOURCE_NAME, `"${DEFAULT_SOURCE_NAME}" is the source configured from NETBOX_URL and WEBHOOK_*`),
  netbox_url: httpUrl.optional(),
  token_file: secretRef.optional(),
  token_env: envName.optional(),
  token: inlineSecret.optional(),
  webhook_secret_file: secretRef.optional(),
  webhook_secret_env: envName.optional(),
  webhook_secret: inlineSecret.optional(),
  webhook_secret_previous_file: secretRef.optional(),
  webhook_secret_previous_env: envName.optional(),
  ca_file: z.string().trim().min(1).optional(),
  allowed_ips: z.array(cidr).min(1).max(100).optional(),
  tags: z.record(z.string().min(1).max(100), z.union([z.string().max(200), z.number(), z.boolean()]).transform(String)).optional(),
  expect_report_every: asText(duration, 'is not a duration (examples: 24h, 7d)').optional(),
  catch_up_every: asText(catchUpEvery, 'is not a duration (examples: 5m, 1h) nor off').optional(),
  // No longer read (CATCH_UP_MAX_MAILED holds for every source), but accepted with a warning: the relay works as before.
  catch_up_max: z.unknown().optional(),
});

export const SourcesFileSchema = z.strictObject({
  sources: z.array(SourceSchema, { error: 'must be a list of sources' }).min(1, 'needs at least one source').max(MAX_SOURCES),
});

/** What reading SOURCES_FILE needs: the file system (injected) and the environment for `*_env` references. */
interface SourcesContext {
  readFile: (file: string) => string;
  env: Readonly<Record<string, string>>;
  cwd: string;
}

/** The `default` source from its variables, then SOURCES_FILE's, each problem reading "<file>: source 2 (lab) field: why". */
export function readSources(settings: Settings, context: SourcesContext, issues: ConfigIssue[], warnings: ConfigIssue[]): SourceConfig[] {
  const build = (name: string, fields: SourceFields) => buildSource(name, fields, settings, context.cwd);
  const sources = [build(DEFAULT_SOURCE_NAME, settings.source)];
  if (!settings.sourcesFile) return sources;
  const file = path.resolve(context.cwd, settings.sourcesFile);
  const say = (list: ConfigIssue[]) => (message: string) => list.push({ variable: 'SOURCES_FILE', message });
  const parse = (text: string) => parseYamlListFile(text, file, SourcesFileSchema, { listKey: 'sources', noun: 'source' }).sources;
  const entries = readYamlListFile(file, context.readFile, parse, say(issues)) ?? [];
  entries.forEach((entry, i) => {
    const where = `${file}: source ${i + 1} (${entry.name})`;
    const report = (field: string, message: string) => say(issues)(`${where} ${field}: ${message}`);
    if (entry.catch_up_max !== undefined)
      say(warnings)(
        `${where} catch_up_max is no longer read: a catch-up mails at most ${CATCH_UP_MAX_MAILED} missed reports of a source one by one; remove it`,
      );
    const secret = (field: string) => resolveSecret(entry as unknown as Record<string, string | undefined>, field, context, report);
    const [current, previous] = [secret('webhook_secret'), secret('webhook_secret_previous')];
    if (previous !== undefined && current === undefined)
      report('webhook_secret_previous_file', 'is only accepted alongside a current webhook secret (during a rotation)');
    const token = secret('token');
    if (entry.netbox_url === undefined && (token !== undefined || entry.ca_file !== undefined))
      report('netbox_url', 'is required with a token or a CA file');
    const allowed_ips = entry.allowed_ips?.map((c) => parseCidr(c)!);
    sources.push(build(entry.name, { ...entry, token, webhook_secret: current, webhook_secret_previous: previous, allowed_ips }));
  });
  return sources;
}

/** A source's fields, as the default source's variables give them; a named source without `catch_up_every` follows CATCH_UP_EVERY. */
type SourceFields = Omit<Settings['source'], 'catch_up_every'> & { catch_up_every?: number | null; tags?: Record<string, string> };

/** A source as the relay holds it, whichever way it was given: its path, NetBox's URL and CA file made canonical. */
function buildSource(name: string, fields: SourceFields, settings: Settings, cwd: string): SourceConfig {
  const webhookPath = settings.webhook.path;
  const { netbox_url: url, token, ca_file: caFile } = fields;
  return {
    name,
    path: name === DEFAULT_SOURCE_NAME ? webhookPath : `${webhookPath === '/' ? '' : webhookPath}/${name}`,
    secrets: [fields.webhook_secret, fields.webhook_secret_previous].filter((s): s is string => s !== undefined),
    allowedIps: fields.allowed_ips,
    netbox: { url: url?.replace(/\/+$/, ''), token, caFile: caFile ? path.resolve(cwd, caFile) : undefined },
    tags: fields.tags ?? {},
    expectEveryMs: fields.expect_report_every,
    catchUp: {
      everyMs: fields.catch_up_every === undefined ? settings.source.catch_up_every : fields.catch_up_every,
      max: CATCH_UP_MAX_MAILED,
    },
  };
}

/** `<field>_file` or `<field>_env` (never both), read now; a blank or unreadable one is reported. */
function resolveSecret(
  entry: Record<string, string | undefined>,
  field: string,
  context: SourcesContext,
  report: (field: string, message: string) => void,
): string | undefined {
  const file = entry[`${field}_file`];
  const variable = entry[`${field}_env`];
  if (file !== undefined && variable !== undefined) {
    report(field, `give ${field}_file or ${field}_env, not both`);
    return undefined;
  }
  const say = (message: string) => report(file !== undefined ? `${field}_file` : `${field}_env`, message);
  if (variable !== undefined && context.env[variable] === undefined) say(`the environment variable ${variable} is not set`);
  const value =
    file !== undefined
      ? readSecretFile((f) => context.readFile(path.resolve(context.cwd, f)), file, say)
      : variable && context.env[variable];
  if (value === undefined) return undefined;
  const problem =
    value.trim() === ''
      ? 'is empty or only white space'
      : field === 'webhook_secret'
        ? describeShortWebhookSecret(value)
        : field === 'token' && !/^[\x21-\x7e]{1,500}$/.test(value)
          ? 'must hold one token without spaces (nbt_<key>.<token> or a 40-character key)'
          : undefined;
  if (problem) say(problem);
  return problem ? undefined : value;
}

/** Whether a source's catch-up runs: `on` with its cadence, or `off` with the reason in the setting's own words. */
export type CatchUpPlan = { on: true; everyMs: number; max: number } | { on: false; reason: string };

/** Whether the relay fetches a source's missed reports: it needs NetBox's URL and token and a cadence that is not `off`. */
export function planCatchUp(source: Pick<SourceConfig, 'name' | 'netbox' | 'catchUp'>): CatchUpPlan {
  const isDefault = source.name === DEFAULT_SOURCE_NAME;
  const name = (env: string, field: string) => (isDefault ? env : `${field} of ${source.name} in SOURCES_FILE`);
  if (source.catchUp.everyMs === null) return { on: false, reason: `${name('CATCH_UP_EVERY', 'catch_up_every')} is off` };
  if (!source.netbox.url) return { on: false, reason: `${name('NETBOX_URL', 'netbox_url')} is not set: there is no NetBox to ask` };
  if (!source.netbox.token)
    return { on: false, reason: `${name('NETBOX_TOKEN', 'token_file or token_env')} is not set: NetBox lists reports only to a token` };
  return { on: true, everyMs: source.catchUp.everyMs, max: source.catchUp.max };
}

/** One line for check-config and the start log: "every 5m, at most 20 mailed per run" or "off: why". */
export function describeCatchUp(plan: CatchUpPlan): string {
  if (!plan.on) return `off: ${plan.reason}`;
  const units = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  const [unit, size] = Object.entries(units).find(([, ms]) => plan.everyMs % ms === 0)!;
  return `every ${plan.everyMs / size}${unit}, at most ${plan.max} missed reports mailed per run`;
}

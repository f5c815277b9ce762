import { z } from 'zod';
import { findTransport, TRANSPORTS, type TransportDescriptor } from '../notify';
import { SECRET_MARK as REDACTED, SETTING_GROUPS } from '../shared';
import { FILE_MODE_DEFAULT_TO, type Config } from './load-config';
import { redactUrlPassword } from './redact-config';
import { buildSettingsSchema, listSettingLeaves, SettingsSchema, type AnySettingsSchema } from './schema';
import { planCatchUp } from './sources-file';

/** Every setting of `schema` as the reference, .env.example and `check-config` show it: by group, each in the schema's order. */
export function describeSettings(schema: AnySettingsSchema = SettingsSchema) {
  const docs = listSettingLeaves(schema).map(({ name, schema: field, meta }) => {
    // The input side: defaults and bounds as a user writes them, not as the relay holds them (5m, not 300000).
    const property = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' });
    const parsed: unknown = field.safeParse(undefined, { jitless: true }).data;
    const value = property.default ?? parsed;
    return {
      name,
      ...meta,
      /** The default as a user writes it (`5m`, `true`, `8080`); undefined when there is none in the schema. */
      default: value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value),
      /** The allowed values (`json`, `pretty`) or range (`1–100`) when the schema bounds them. */
      allowed: meta.allowedText ?? describeAllowed(property, typeof parsed === 'boolean'),
      secret: meta.secret === true,
    };
  });
  const order = Object.keys(SETTING_GROUPS);
  return docs.sort((a, b) => order.indexOf(a.group) - order.indexOf(b.group));
}

function describeAllowed(property: z.core.JSONSchema.BaseSchema, boolean: boolean): string | undefined {
  if (boolean) return '`true`, `false`';
  if (property.enum) return property.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (property.type !== 'integer') return undefined;
  const max = property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER ? property.maximum : undefined;
  return max !== undefined ? `${property.minimum ?? 0}–${max}` : `≥ ${property.minimum ?? 0}`;
}

/** NAME=value lines to compare with a .env: set (secrets redacted), defaulted (only those in force), or unset. */
export function formatSettings(
  env: Record<string, string | undefined>,
  config: Config,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): string[] {
  const [set, defaulted, advancedDefaulted, unset]: string[][] = [[], [], [], []];
  // A transport's settings mean something only when the transport in force reads them (Graph's do not with SMTP).
  const read = findTransport(config.transport, transports).settingsInForce(config.transport.settings);
  const isInForce = (name: string) =>
    transports.some((t) => name in t.settings) ? read.includes(name) : isRelaySettingInForce(name, config);
  for (const { name, group, default: byDefault, secret } of describeSettings(buildSettingsSchema(transports))) {
    const raw = env[name];
    const file = secret ? env[`${name}_FILE`] : undefined;
    if (raw !== undefined && raw !== '') set.push(`  ${name}=${secret ? REDACTED : redactUrlPassword(raw)}`);
    else if (file !== undefined && file !== '') set.push(`  ${name}_FILE=${file}`);
    else if (name === 'HOST') {
      const why = config.sources[0].secrets.length > 0 ? 'all interfaces: WEBHOOK_SECRET is set' : 'loopback only: no WEBHOOK_SECRET';
      defaulted.push(`  ${name}=${config.http.host} (${why})`);
    } else if (name === 'MAIL_TO' && config.transport.name === 'file' && !config.routing.file) {
      defaulted.push(`  ${name}=${FILE_MODE_DEFAULT_TO} (mails go to files)`);
    } else if (byDefault !== undefined) {
      if (isInForce(name)) (group === 'advanced' ? advancedDefaulted : defaulted).push(`  ${name}=${byDefault}`);
      // OAuth2's and Graph's unset settings are noise to a relay that uses neither.
    } else if (group !== 'provider' || isInForce(name)) unset.push(name);
  }
  return [
    `Set by you (environment or .env; secrets redacted):`,
    ...(set.length > 0 ? set : ['  (nothing)']),
    `Defaults in force:`,
    ...defaulted,
    `Advanced defaults in force (rarely changed; docs/configuration.md):`,
    ...advancedDefaulted,
    `Not set (optional): ${unset.join(', ')}`,
  ];
}

/** Whether a defaulted variable of the relay's own means anything here (SQLite's do not with DATABASE_URL): only those are shown. */
function isRelaySettingInForce(name: string, config: Config): boolean {
  if (name === 'SQLITE_SYNCHRONOUS' || name === 'DATA_DIR') return config.store.databaseUrl === undefined;
  // The cadence of a catch-up that runs: a source with NetBox's URL and token (the line "Catch-up of missed reports" says why not).
  if (name === 'CATCH_UP_EVERY') return config.sources.some((s) => planCatchUp(s).on);
  if (name.startsWith('NETBOX_')) return config.sources.some((s) => s.netbox.url !== undefined);
  return true;
}

import type { Condition, Route } from '../routing';
import { describeShortWebhookSecret, isLoopbackHost, type ConfigIssue } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { Settings } from './schema';
import type { SourceConfig } from './sources-file';

/** No unsigned deliveries from the network by accident; a blank secret (likely a missing one) or a short one is refused. */
export function checkWebhookExposure(issues: ConfigIssue[], rawEnv: Record<string, string | undefined>, s: Settings, host: string): void {
  const parsed = { WEBHOOK_SECRET: s.source.webhook_secret, WEBHOOK_SECRET_PREVIOUS: s.source.webhook_secret_previous };
  const blank = (name: keyof typeof parsed) => (parsed[name] ?? rawEnv[name])?.trim() === '';
  for (const name of ['WEBHOOK_SECRET', 'WEBHOOK_SECRET_PREVIOUS'] as const) {
    if (!blank(name)) continue;
    issues.push({
      variable: parsed[name] !== undefined && rawEnv[`${name}_FILE`] ? `${name}_FILE` : name,
      message: 'is empty or only white space: give the secret NetBox signs with (openssl rand -hex 32), or remove the variable',
    });
  }
  if (blank('WEBHOOK_SECRET')) return; // saying it is also required would repeat it
  const secret = parsed.WEBHOOK_SECRET;
  const short = secret !== undefined ? describeShortWebhookSecret(secret) : undefined;
  if (short) issues.push({ variable: rawEnv.WEBHOOK_SECRET_FILE ? 'WEBHOOK_SECRET_FILE' : 'WEBHOOK_SECRET', message: short });
  if (secret === undefined && !isLoopbackHost(host) && !s.webhook.allowUnsigned) {
    issues.push({
      variable: 'WEBHOOK_SECRET',
      message: `is required to listen on HOST=${host}, beyond loopback: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE) to NetBox's webhook secret, listen on 127.0.0.1, or set WEBHOOK_ALLOW_UNSIGNED=true to accept unsigned deliveries from the network knowingly`,
    });
  }
  if (secret !== undefined && s.webhook.allowUnsigned) {
    issues.push({ variable: 'WEBHOOK_ALLOW_UNSIGNED', message: 'has no effect with WEBHOOK_SECRET set: deliveries must be signed' });
  }
}

/** Rules between variables, checked only when the variables compared were valid (a stand-in default would report nonsense). */
export function checkCrossFieldRules(issues: ConfigIssue[], { source }: Settings, broken: ReadonlySet<string>): void {
  if (source.webhook_secret_previous !== undefined && source.webhook_secret === undefined && !broken.has('WEBHOOK_SECRET'))
    issues.push({ variable: 'WEBHOOK_SECRET_PREVIOUS', message: 'is only accepted alongside WEBHOOK_SECRET (during a rotation)' });
  if (source.netbox_url === undefined && !broken.has('NETBOX_URL')) {
    if (source.token !== undefined) issues.push({ variable: 'NETBOX_TOKEN', message: 'has no effect without NETBOX_URL' });
    if (source.ca_file !== undefined) issues.push({ variable: 'NETBOX_CA_FILE', message: 'has no effect without NETBOX_URL' });
  }
}

/**
 * A named source beyond loopback needs a webhook secret, as the default does; routes name only configured sources (a typo
 * routes none); CA files are read now, so one that cannot be is said by its variable (else serve stops on a bare ENOENT).
 */
export function checkSources(
  issues: ConfigIssue[],
  settings: Settings,
  host: string,
  sources: SourceConfig[],
  routes: Route[] | undefined,
  readFile: (file: string) => unknown,
): void {
  if (!isLoopbackHost(host) && !settings.webhook.allowUnsigned) {
    for (const s of sources.filter((source) => source.name !== DEFAULT_SOURCE_NAME && source.secrets.length === 0)) {
      issues.push({
        variable: 'SOURCES_FILE',
        message: `source ${s.name} webhook_secret_file: is required to listen on HOST=${host}, beyond loopback (or webhook_secret_env)`,
      });
    }
  }
  const known = new Set(sources.map((s) => s.name));
  // Owners come from NetBox: without any NetBox to ask, every report would go whole to the fallback.
  const canAskNetbox = sources.some((s) => s.netbox.url && s.netbox.token);
  for (const route of (routes ?? []).filter((r) => r.owners !== undefined && !canAskNetbox)) {
    issues.push({
      variable: 'ROUTES_FILE',
      message: `route ${route.name} to.netbox_contacts: needs NETBOX_URL and NETBOX_TOKEN (or a source with netbox_url and a token) to read who owns what`,
    });
  }
  const configured = [...known].join(', ');
  for (const route of routes ?? [])
    for (const name of collectSourceNames(route.match).filter((n) => !known.has(n)))
      issues.push({
        variable: 'ROUTES_FILE',
        message: `route ${route.name} match.source: "${name}" is not a configured source (${configured})`,
      });
  for (const { name, netbox } of sources) {
    const [variable, field, file] =
      name !== DEFAULT_SOURCE_NAME
        ? ['SOURCES_FILE', `source ${name} ca_file: `, netbox.caFile]
        : ['NETBOX_CA_FILE', '', netbox.url && netbox.caFile];
    if (!file) continue;
    try {
      readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      issues.push({ variable, message: `${field}cannot read ${file} (${code}): accepts a readable PEM file` });
    }
  }
}

/** Every source name a condition mentions, at any depth. */
function collectSourceNames(condition: Condition | undefined): string[] {
  if (!condition) return [];
  return [...(condition.source ?? []), ...[...(condition.all ?? []), ...(condition.any ?? [])].flatMap(collectSourceNames)];
}

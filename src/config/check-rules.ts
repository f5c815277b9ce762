import path from 'node:path';
import type { Condition, Route } from '../routing';
import { describeShortWebhookSecret, isLoopbackHost, type ConfigIssue } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { Env } from './schema';
import type { SourceConfig } from './sources-file';

/**
 * A relay must not take unsigned deliveries from the network by accident: beyond loopback it needs WEBHOOK_SECRET, or
 * WEBHOOK_ALLOW_UNSIGNED=true to say it is meant. A blank secret is refused (though other empty values are unset, it is too
 * easily a secret that went missing), and so is a short one; the previous secret of a rotation, being retired, is not checked.
 */
export function checkWebhookExposure(rawEnv: Record<string, string | undefined>, e: Env, host: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const blank = (name: 'WEBHOOK_SECRET' | 'WEBHOOK_SECRET_PREVIOUS') => {
    const value = e[name] ?? rawEnv[name];
    return value !== undefined && value.trim() === '';
  };
  for (const name of ['WEBHOOK_SECRET', 'WEBHOOK_SECRET_PREVIOUS'] as const) {
    if (!blank(name)) continue;
    const variable = e[name] !== undefined && rawEnv[`${name}_FILE`] ? `${name}_FILE` : name;
    issues.push({
      variable,
      message: 'is empty or only white space: give the secret NetBox signs with (openssl rand -hex 32), or remove the variable',
    });
  }
  // The secret in force: a blank one is reported above.
  const secret = blank('WEBHOOK_SECRET') ? undefined : e.WEBHOOK_SECRET;
  const signed = secret !== undefined;
  const short = signed ? describeShortWebhookSecret(secret) : undefined;
  if (short) issues.push({ variable: rawEnv.WEBHOOK_SECRET_FILE ? 'WEBHOOK_SECRET_FILE' : 'WEBHOOK_SECRET', message: short });
  // A blank secret is reported above; saying again that one is required would only repeat it.
  if (!signed && !blank('WEBHOOK_SECRET') && !isLoopbackHost(host) && !e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({
      variable: 'WEBHOOK_SECRET',
      message: `is required to listen on HOST=${host}, beyond loopback: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE) to NetBox's webhook secret, listen on 127.0.0.1, or set WEBHOOK_ALLOW_UNSIGNED=true to accept unsigned deliveries from the network knowingly`,
    });
  }
  if (signed && e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({ variable: 'WEBHOOK_ALLOW_UNSIGNED', message: 'has no effect with WEBHOOK_SECRET set: deliveries must be signed' });
  }
  return issues;
}

/** Real mail needs recipients: MAIL_TO, or ROUTES_FILE naming them. */
export function checkRecipientsRequired(e: Env, broken: ReadonlySet<string>, when: string, issues: ConfigIssue[]): void {
  if ((!e.MAIL_TO || e.MAIL_TO.length === 0) && e.ROUTES_FILE === undefined && !broken.has('MAIL_TO') && !broken.has('ROUTES_FILE')) {
    issues.push({ variable: 'MAIL_TO', message: `is required when ${when} and there is no ROUTES_FILE (comma-separated addresses)` });
  }
}

/**
 * Rules between variables. Each applies only when its feature is on, and only when the variables it compares
 * were valid: a rule checked against a default that stands in for a refused value would report nonsense.
 */
export function checkCrossFieldRules(e: Env, broken: ReadonlySet<string>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (e.WEBHOOK_SECRET_PREVIOUS !== undefined && e.WEBHOOK_SECRET === undefined && !broken.has('WEBHOOK_SECRET'))
    issues.push({ variable: 'WEBHOOK_SECRET_PREVIOUS', message: 'is only accepted alongside WEBHOOK_SECRET (during a rotation)' });
  if (e.NETBOX_URL === undefined && !broken.has('NETBOX_URL')) {
    for (const v of ['NETBOX_TOKEN', 'NETBOX_CA_FILE'] as const) {
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without NETBOX_URL' });
    }
  }
  return issues;
}

/** A named source beyond loopback needs a webhook secret, as the default does; routes name only configured sources (a typo routes none). */
export function checkSourceRules(e: Env, host: string, sources: SourceConfig[], routes: Route[] | undefined): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!isLoopbackHost(host) && !e.WEBHOOK_ALLOW_UNSIGNED) {
    for (const s of sources.filter((source) => source.secrets.length === 0)) {
      issues.push({
        variable: 'SOURCES_FILE',
        message: `source ${s.name} webhook_secret_file: is required to listen on HOST=${host}, beyond loopback (or webhook_secret_env)`,
      });
    }
  }
  const known = new Set([DEFAULT_SOURCE_NAME, ...sources.map((s) => s.name)]);
  // Owners come from NetBox: without any NetBox to ask, every report would go whole to the fallback.
  const canAskNetbox = (e.NETBOX_URL !== undefined && e.NETBOX_TOKEN !== undefined) || sources.some((s) => s.netbox.url && s.netbox.token);
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
  return issues;
}

/**
 * CA files are read when the relay starts: one that cannot be read is said now, by its variable, with the rest (else
 * check-config passes and serve stops on a bare ENOENT). One has no effect without its URL (said elsewhere); the
 * transports check their own (SMTP_CA_FILE).
 */
export function checkCaFiles(
  e: Env,
  sources: readonly SourceConfig[],
  context: { readFile: (file: string) => unknown; cwd: string },
): ConfigIssue[] {
  const files = [
    { variable: 'NETBOX_CA_FILE', field: '', file: e.NETBOX_URL && e.NETBOX_CA_FILE && path.resolve(context.cwd, e.NETBOX_CA_FILE) },
    ...sources.map((s) => ({ variable: 'SOURCES_FILE', field: `source ${s.name} ca_file: `, file: s.netbox.caFile })),
  ];
  const issues: ConfigIssue[] = [];
  for (const { variable, field, file } of files) {
    if (!file) continue;
    try {
      context.readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      issues.push({ variable, message: `${field}cannot read ${file} (${code}): accepts a readable PEM file` });
    }
  }
  return issues;
}

/** Every source name a condition mentions, at any depth. */
function collectSourceNames(condition: Condition | undefined): string[] {
  if (!condition) return [];
  return [...(condition.source ?? []), ...[...(condition.all ?? []), ...(condition.any ?? [])].flatMap(collectSourceNames)];
}

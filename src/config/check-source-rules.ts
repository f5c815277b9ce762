import type { Condition, Route } from '../routing';
import { isLoopbackHost } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { ConfigIssue } from './config-issue';
import type { Env } from './schema';
import type { SourceConfig } from './sources-file';

/**
 * A named source beyond loopback needs a webhook secret (as the default does), and a route
 * may only name sources that exist: a typo would silently route nothing.
 */
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
  for (const route of routes ?? []) {
    for (const name of collectSourceNames(route.match)) {
      if (!known.has(name)) {
        issues.push({
          variable: 'ROUTES_FILE',
          message: `route ${route.name} match.source: "${name}" is not a configured source (${[...known].join(', ')})`,
        });
      }
    }
  }
  return issues;
}

/** Every source name a condition mentions, at any depth. */
function collectSourceNames(condition: Condition | undefined): string[] {
  if (!condition) return [];
  return [...(condition.source ?? []), ...[...(condition.all ?? []), ...(condition.any ?? [])].flatMap(collectSourceNames)];
}

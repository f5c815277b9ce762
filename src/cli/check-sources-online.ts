import { planCatchUp, type Config, type SourceConfig } from '../config';
import { loadRenderer, type Renderer } from '../mail';
import { NetboxError, readNetboxStatus } from '../netbox';
import { createSourceNetboxClient } from '../relay';
import { chooseProxy, describeProxyUrl, systemClock } from '../shared';
import { openStore, type Store } from '../store';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, type CliIo } from './io';
import { composeReadOnly, describeOwnerGroups, findOwnerGroups } from './read-only-composer';

/** `check-config --online`: each source's status, then one item of each list the config needs, so a missing permission is named now. */
export async function checkSourcesOnline(config: Config, io: CliIo): Promise<number> {
  let exitCode = 0;
  for (const source of config.sources) {
    const check = await checkSource(config, source, io);
    io.stdout.write(`${check.line}\n`);
    // A refusal (fix the configuration) outranks an outage (try again).
    if (check.exitCode === EXIT_CONFIG || (check.exitCode !== 0 && exitCode === 0)) exitCode = check.exitCode;
  }
  await checkOwnerRoutesOnline(config, io);
  return exitCode;
}

/** The lists this configuration reads from a source's NetBox, each with the permission (`<app>.view_<model>`) it needs. */
function listNetboxNeeds(config: Config, source: SourceConfig) {
  const owners = config.routing.routes.some((r) => r.owners !== undefined);
  const needs: [on: boolean, what: string, list: string, permission: string][] = [
    [true, 'test results (the failing tests in mails)', 'plugins/validity/test-results', 'validity.view_compliancetestresult'],
    [planCatchUp(source).on, 'the reports list (the catch-up)', 'plugins/validity/reports', 'validity.view_compliancereport'],
    [owners, 'devices (routes by owner)', 'dcim/devices', 'dcim.view_device'],
    [owners, 'contact assignments (routes by owner)', 'tenancy/contact-assignments', 'tenancy.view_contactassignment'],
    [owners, 'contacts (routes by owner)', 'tenancy/contacts', 'tenancy.view_contact'],
  ];
  return needs.filter(([on]) => on).map(([, what, list, permission]) => ({ what, path: `/api/${list}/?limit=1&brief=1`, permission }));
}

/** One source's NetBox: a line to print, and 0, EXIT_CONFIG (refused: token, permission, plugin) or EXIT_UNAVAILABLE (no answer). */
async function checkSource(config: Config, source: SourceConfig, io: CliIo): Promise<{ line: string; exitCode: number }> {
  const name = `NetBox source ${source.name}`;
  if (!source.netbox.url) return { line: `${name}: no NetBox URL, nothing to check (links stay relative, no enrichment)`, exitCode: 0 };
  const client = createSourceNetboxClient(config, source, { clock: systemClock, readFile: io.readFile }, { maxAttempts: 1 });
  const proxy = chooseProxy(client.url, config.proxy);
  const where = `${name} (${client.url}${proxy ? ` through the proxy ${describeProxyUrl(proxy)}` : ''})`;
  const budget = () => ({ deadline: systemClock.now() + config.netbox.timeoutMs });
  try {
    const { netbox, validity } = await readNetboxStatus(client, budget());
    const version = netbox ?? 'unknown';
    if (validity === undefined)
      return { line: `${where}: NetBox ${version}, but the validity plugin is not installed`, exitCode: EXIT_CONFIG };
    const found = `${where}: NetBox ${version}, validity ${validity}`;
    if (!source.netbox.token) return { line: `${found}; no token: mails go without the failing results`, exitCode: 0 };
    const read: string[] = [];
    const refused: string[] = [];
    for (const need of listNetboxNeeds(config, source)) {
      try {
        await client.getJson(need.path, budget());
        read.push(need.what);
      } catch (error) {
        if (!(error instanceof NetboxError) || error.code !== 'AUTH') throw error;
        refused.push(`  grant ${need.permission}: the token may not read ${need.what}; ${error.message}`);
      }
    }
    const reads = read.length > 0 ? `; the token reads ${read.join(', ')}` : '';
    if (refused.length === 0) return { line: `${found}${reads}`, exitCode: 0 };
    return { line: [`${found}${reads}; NetBox refused what this configuration needs:`, ...refused].join('\n'), exitCode: EXIT_CONFIG };
  } catch (error) {
    if (!(error instanceof NetboxError)) throw error;
    const exitCode = error.retryable ? EXIT_UNAVAILABLE : EXIT_CONFIG;
    return { line: `${where}: ${error.code}: ${error.message}`, exitCode };
  } finally {
    client.close();
  }
}

/** Routes by owner: whom each would reach with the latest report of each source in the store, and why. Writes nothing. */
async function checkOwnerRoutesOnline(config: Config, io: CliIo): Promise<void> {
  const routes = config.routing.routes.filter((r) => r.owners !== undefined);
  if (routes.length === 0) return;
  let store: Store | undefined;
  let renderer: Renderer | undefined;
  try {
    store = openStore(config.store);
    for (const source of config.sources) {
      const [latest] = await store.listDeliveries({ limit: 1, netboxSource: source.name });
      if (!latest) {
        io.stdout.write(`Routes by owner, source ${source.name}: no report in the store yet\n`);
        continue;
      }
      const body = await store.getDeliveryBody(latest.id);
      if (!body) continue;
      const delivery = { ...latest, body };
      renderer ??= loadRenderer(config.mail.templatesDir);
      await composeReadOnly(config, delivery, { renderer, store, readFile: io.readFile }, async (_composer, composed) => {
        for (const route of routes) {
          const owners = await findOwnerGroups(config, config.routing.routes, route.name, delivery, composed, store);
          const head = `Route ${route.name}, latest report ${latest.reportId} of source ${source.name} (delivery ${latest.id})`;
          io.stdout.write(
            owners.groups.length
              ? `${head}:\n${describeOwnerGroups(owners, null, '  ')}`
              : `${head}: would not mail it (not matched, or held back)\n`,
          );
        }
      });
    }
  } catch (error) {
    io.stdout.write(`Routes by owner: could not be checked (${(error as Error)?.message ?? String(error)})\n`);
  } finally {
    await store?.close();
  }
}

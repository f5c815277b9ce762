import type { Config } from '../config';
import { defaultTemplatesDir, loadRenderer, type Renderer } from '../mail';
import { createRelayNetboxClients } from '../relay';
import { systemClock } from '../shared';
import { openStore, type Store } from '../store';
import type { CliIo } from './io';
import { describeOwnerGroups, findOwnerGroups } from './owner-groups';
import { createReadOnlyComposer } from './read-only-composer';

/**
 * `check-config --online`, routes by owner: for the latest report of each source in the store, whom
 * each route by owner would reach (the groups recorded for it, else resolved now from NetBox, with
 * the source's own token) and why. Prints only; reads the store, writes nothing.
 */
export async function checkOwnerRoutesOnline(config: Config, io: CliIo): Promise<void> {
  const routes = config.routing.routes.filter((r) => r.owners !== undefined);
  if (routes.length === 0) return;
  let store: Store | undefined;
  let renderer: Renderer | undefined;
  const netbox = createRelayNetboxClients(config, { clock: systemClock, readFile: io.readFile });
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
      renderer ??= loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir());
      const composer = createReadOnlyComposer(config, { renderer, store, netbox: netbox.get(source.name), sourceName: source.name });
      const composed = await composer(delivery);
      for (const route of routes) {
        const owners = await findOwnerGroups(config.routing.routes, route.name, delivery, composed, store);
        const head = `Route ${route.name}, latest report ${latest.reportId} of source ${source.name} (delivery ${latest.id})`;
        io.stdout.write(
          owners.groups.length
            ? `${head}:\n${describeOwnerGroups(owners, null, '  ')}`
            : `${head}: would not mail it (not matched, or held back)\n`,
        );
      }
    }
  } catch (error) {
    io.stdout.write(`Routes by owner: could not be checked (${(error as Error)?.message ?? String(error)})\n`);
  } finally {
    for (const client of netbox.values()) client.close();
    await store?.close();
  }
}

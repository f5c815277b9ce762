import type { ComposedReport, ReportComposer } from '../compose';
import type { Config } from '../config';
import type { Renderer } from '../mail';
import { createRelayReportComposer, createRelayWaiverBook, createSourceNetboxClient, findDeliverySource } from '../relay';
import { createRoutePlanner, type Route } from '../routing';
import { createSilentLogger, systemClock } from '../shared';
import type { DeliveryRecord, OwnerGroupPlan, Store } from '../store';

/** Composes `delivery` as the worker does, history read but never written; `use` runs while its NetBox client is open. */
export async function composeReadOnly<T>(
  config: Config,
  delivery: DeliveryRecord,
  deps: { renderer: Renderer; store?: Store; readFile: (file: string) => Buffer; routes?: readonly Route[] },
  use: (composer: ReportComposer, composed: ComposedReport) => Promise<T>,
): Promise<T> {
  const { store } = deps;
  const io = { clock: systemClock, logger: createSilentLogger() };
  const source = findDeliverySource(config, delivery.source);
  const netbox = source.netbox.url ? createSourceNetboxClient(config, source, { clock: systemClock, readFile: deps.readFile }) : undefined;
  try {
    const composer = createRelayReportComposer(config, io, {
      waivers: store && createRelayWaiverBook(config, io, store),
      renderer: deps.renderer,
      source,
      netbox,
      routes: deps.routes,
      history: store && {
        findReportBefore: store.findReportBefore.bind(store),
        listReportsBefore: store.listReportsBefore.bind(store),
        findReport: store.findReport.bind(store),
        saveReport: () => Promise.resolve(),
      },
      stored: store && ((d) => store.findReport(d.dedupKey)),
    });
    return await use(composer, await composer.compose(delivery));
  } finally {
    netbox?.close();
  }
}

type OwnerGroups = { groups: OwnerGroupPlan[]; recorded: boolean };

/** Route `name`'s owner groups for a delivery: as recorded when planned, else resolved now as the worker would (nothing stored). */
export async function findOwnerGroups(
  config: Config,
  routes: readonly Route[],
  name: string,
  delivery: DeliveryRecord,
  composed: ComposedReport,
  store: Store | undefined,
): Promise<OwnerGroups> {
  const mails = store && delivery.id > 0 ? await store.listRouteMails([delivery.id]) : [];
  const recorded = mails.flatMap((m) => (m.ownerGroup?.route === name ? [m.ownerGroup] : []));
  if (recorded.length > 0) return { groups: recorded, recorded: true };
  const planner = createRoutePlanner({
    routes,
    sources: config.sources,
    store: store ?? { lastRouteMailCompletedAt: () => Promise.resolve(null) },
  });
  const plan = await planner(composed);
  return { groups: plan.flatMap((m) => (m.ownerGroup?.route === name ? [m.ownerGroup] : [])), recorded: false };
}

export function describeOwnerGroups(owners: OwnerGroups, shown: OwnerGroupPlan | null, indent = ''): string {
  if (owners.groups.length === 0) return '';
  const how = owners.recorded ? 'as recorded when the delivery was planned' : 'resolved now from NetBox; nothing is stored';
  const lines = owners.groups.map((g) => {
    const fixed = g.fixedDevices?.length ? `fixed, failing nothing now: ${g.fixedDevices.join(', ')}` : '';
    const listed = [g.devices.join(', '), fixed].filter((part) => part !== '').join('; ');
    const devices = listed ? ` (${listed})` : '';
    return `${indent}${g === shown ? '* ' : '  '}${g.key}: ${g.to.join(', ')}: ${g.why}${devices}${g.note ? `. ${g.note}` : ''}\n`;
  });
  return `${indent}Owner groups (${how}${shown ? '; choose with --group' : ''}):\n${lines.join('')}`;
}

import type { ReportComposer } from '../compose';
import type { Config } from '../config';
import type { Renderer } from '../mail';
import type { NetboxClient } from '../netbox';
import { createRelayReportComposer, createRelayWaiverBook, findDeliverySource } from '../relay';
import type { Route } from '../routing';
import { createSilentLogger, systemClock } from '../shared';
import type { Store } from '../store';

/**
 * The relay's report composer for a command that looks and does not send (`preview`, `check-config
 * --online`): the series' history read from the store as the worker reads it, never written (a no-op
 * save), and the failures stored with the report.
 */
export function createReadOnlyComposer(
  config: Config,
  deps: { renderer: Renderer; store?: Store; netbox?: NetboxClient; sourceName: string; routes?: readonly Route[] },
): ReportComposer {
  const { store } = deps;
  const io = { clock: systemClock, logger: createSilentLogger() };
  return createRelayReportComposer(config, io, {
    waivers: store && createRelayWaiverBook(config, io, store),
    renderer: deps.renderer,
    source: findDeliverySource(config, deps.sourceName),
    netbox: deps.netbox,
    routes: deps.routes,
    history: store && {
      findReportBefore: store.findReportBefore.bind(store),
      listReportsBefore: store.listReportsBefore.bind(store),
      findReport: store.findReport.bind(store),
      saveReport: () => Promise.resolve(),
    },
    storedFailures: store && (async (d) => (await store.findReport(d.dedupKey))?.failing),
    storedStates: store && (async (d) => (await store.findReport(d.dedupKey))?.states),
  });
}

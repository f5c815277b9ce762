import type { Registry } from 'prom-client';
import { describeCatchUp, planCatchUp, type Config } from '../config';
import { registerCatchUpSeries } from '../metrics';
import type { NetboxClient } from '../netbox';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';
import { createCatchUp, type CatchUp, type CatchUpOutcome } from './create-catch-up';

/** The catch-ups of every source that has it on, run as one. */
export interface SourceCatchUps {
  /** The sources caught up (their NetBox URL and token set, their cadence not `off`). */
  readonly sources: readonly string[];
  /** Catches every source up now; resolves with each one's outcome. */
  run(): Promise<CatchUpOutcome[]>;
  start(): void;
  /** Stops the timers; resolves once the runs in flight have ended. */
  stop(): Promise<void>;
}

/**
 * One catch-up per source whose plan is on (see planCatchUp), each with the source's own NetBox client
 * and this process's name on the leases; says at start, once per source, whether it runs and, if not, why.
 */
export function createSourceCatchUps(
  config: Pick<Config, 'sources'>,
  deps: {
    store: Store;
    netbox: ReadonlyMap<string, NetboxClient>;
    clock: Clock;
    logger: Logger;
    /** The relay's metrics registry: the catch-up's series are registered on it. */
    registry: Registry;
    /** This process's name on leases (the worker's), so a lease in the store names the relay that holds it. */
    owner: string;
    onQueued?: (id: number) => void;
  },
): SourceCatchUps {
  const planned = config.sources.flatMap((source) => {
    const plan = planCatchUp(source);
    const client = deps.netbox.get(source.name);
    deps.logger.info({ source: source.name }, `catch-up of missed reports: ${describeCatchUp(plan)}`);
    return plan.on && client ? [{ source: source.name, netboxUrl: source.netbox.url, client, everyMs: plan.everyMs, max: plan.max }] : [];
  });
  const sources = planned.map((p) => p.source);
  const record = registerCatchUpSeries(deps.registry, { sources, store: deps.store, clock: deps.clock, logger: deps.logger });
  const catchUps: CatchUp[] = planned.map((p) =>
    createCatchUp({
      ...p,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      owner: deps.owner,
      onQueued: deps.onQueued,
      onOutcome: record,
    }),
  );
  return {
    sources,
    run: () => Promise.all(catchUps.map((c) => c.run())),
    start: () => catchUps.forEach((c) => c.start()),
    stop: async () => {
      await Promise.all(catchUps.map((c) => c.stop()));
    },
  };
}

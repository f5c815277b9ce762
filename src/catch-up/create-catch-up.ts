import type { Registry } from 'prom-client';
import { describeCatchUp, planCatchUp, type Config } from '../config';
import { registerCatchUpSeries, type CatchUpOutcome } from '../metrics';
import { NetboxError, type NetboxClient, type RequestBudget } from '../netbox';
import { coalesceRuns, createRepeatingTask, RelayError, type Clock } from '../shared';
import { StorageUnavailableError, type Store } from '../store';
import { catchUpSource, type SourceCatchUpContext } from './catch-up-source';

/** How long one catch-up may talk to NetBox (the list and the missed reports) before it gives up until next time. */
const CATCH_UP_BUDGET_MS = 60_000;
/** The source's lease outlives the budget, so a live run keeps it; a dead relay's lease lapses after this. */
const CATCH_UP_LEASE_MS = 2 * CATCH_UP_BUDGET_MS;

interface CatchUpOptions extends Omit<SourceCatchUpContext, 'store' | 'now' | 'budget'> {
  store: Pick<Store, 'takeCatchUpLease' | 'finishCatchUp'> & SourceCatchUpContext['store'];
  clock: Clock;
  everyMs: number;
  /** This process's name on leases (the worker's), so a lease in the store names the relay that holds it. */
  owner: string;
  onOutcome: (outcome: CatchUpOutcome) => void;
}

/** One catch-up per source whose plan is on, with its own NetBox client; logs at start whether each runs and why not. */
export function createSourceCatchUps(
  config: Pick<Config, 'sources'>,
  deps: Pick<CatchUpOptions, 'clock' | 'logger' | 'owner' | 'onQueued'> & {
    store: Store;
    netbox: ReadonlyMap<string, NetboxClient>;
    registry: Registry;
  },
) {
  const planned = config.sources.flatMap((source) => {
    const plan = planCatchUp(source);
    const client = deps.netbox.get(source.name);
    deps.logger.info({ source: source.name }, `catch-up of missed reports: ${describeCatchUp(plan)}`);
    return plan.on && client ? [{ source: source.name, netboxUrl: source.netbox.url, client, everyMs: plan.everyMs, max: plan.max }] : [];
  });
  const sources = planned.map((p) => p.source);
  const onOutcome = registerCatchUpSeries(deps.registry, { sources, store: deps.store, clock: deps.clock, logger: deps.logger });
  const catchUps = planned.map((p) => createCatchUp({ ...deps, ...p, onOutcome }));
  return {
    /** The sources caught up (their NetBox URL and token set, their cadence not `off`). */
    sources,
    run: () => Promise.all(catchUps.map((c) => c.run())),
    start: () => catchUps.forEach((c) => c.start()),
    /** Stops the timers; resolves once the runs in flight have ended. */
    stop: () => Promise.all(catchUps.map((c) => c.stop())),
  };
}

/**
 * Fetches a source's reports whose webhook never came, at start and every CATCH_UP_EVERY, under its lease (one relay at a
 * time). `run` joins a run under way and never rejects: a failure is logged, counted and retried next turn.
 */
function createCatchUp(options: CatchUpOptions) {
  const { store, clock, logger, source, owner } = options;
  /** The latest run (settled once it is over), for a stop to wait on. */
  let running: Promise<CatchUpOutcome> | undefined;
  /** The run in flight's NetBox budget: a stop ends it, so no request starts or is retried after. */
  let budget: RequestBudget | undefined;

  async function runOnce(): Promise<CatchUpOutcome> {
    const now = clock.now();
    let state;
    try {
      state = await store.takeCatchUpLease({ source, owner, now, leaseMs: CATCH_UP_LEASE_MS });
    } catch (error) {
      return fail(error);
    }
    if (!state) return { source, result: 'busy' };
    budget = { deadline: now + CATCH_UP_BUDGET_MS };
    try {
      const result = await catchUpSource(state, { ...options, now, budget });
      await store.finishCatchUp({ source, owner, now: clock.now(), seen: result.seen });
      return { source, result: 'done', queued: result.queued };
    } catch (error) {
      await store.finishCatchUp({ source, owner, now: clock.now() }).catch(() => undefined);
      return fail(error);
    }
  }

  function fail(error: unknown): CatchUpOutcome {
    // A stable code for the metrics: NetBox's (as `netbox_fetch_errors_total` says them), the store's, or the parser's.
    const code =
      error instanceof NetboxError || error instanceof RelayError
        ? error.code
        : error instanceof StorageUnavailableError
          ? 'STORAGE_UNAVAILABLE'
          : 'ERROR';
    // NetBox's messages are masked by its client (the token never shows); the next turn tries again.
    logger.warn({ source, code, err: (error as Error).message }, 'catch-up of missed reports failed: tried again at its next turn');
    return { source, result: 'failed', code };
  }

  const run = coalesceRuns(async (): Promise<CatchUpOutcome> => {
    const outcome = await (running = runOnce());
    options.onOutcome(outcome);
    return outcome;
  });

  const task = createRepeatingTask(() => void run(), options.everyMs);
  return {
    run,
    start: task.start,
    // Ends the run in flight's budget and waits for it (closing the NetBox client cuts its request).
    async stop() {
      task.stop();
      if (budget) budget.deadline = 0;
      await running;
    },
  };
}

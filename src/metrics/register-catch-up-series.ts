import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock, Logger } from '../shared';
import type { Store } from '../store';

/** How one catch-up of a source ended, as the catch-up answers it and the metrics count it. */
export type CatchUpOutcome =
  | { source: string; result: 'done'; queued: number }
  /** Another relay sharing the store holds the source's lease: it catches up. */
  | { source: string; result: 'busy' }
  | { source: string; result: 'failed'; code: string };

/** The catch-up's series (queued, failures by code, age of any relay's last success); returns the outcome recorder. */
export function registerCatchUpSeries(
  registry: Registry,
  options: { sources: readonly string[]; store: Pick<Store, 'getCatchUpState'>; clock: Clock; logger: Logger },
): (count: CatchUpOutcome) => void {
  const caughtUp = new Counter({
    name: 'compliance_relay_catch_up_reports_total',
    help: 'Reports fetched from NetBox and queued because their webhook never arrived, by NetBox source.',
    labelNames: ['source'] as const,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'compliance_relay_catch_up_failures_total',
    help: 'Catch-ups that failed (tried again at the next turn), by NetBox source and code (AUTH, UNREACHABLE, …).',
    labelNames: ['source', 'code'] as const,
    registers: [registry],
  });
  for (const source of options.sources) caughtUp.inc({ source }, 0);
  new Gauge({
    name: 'compliance_relay_catch_up_last_success_age_seconds',
    help: 'Seconds since a catch-up of the NetBox source last succeeded (by any relay sharing the store).',
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      for (const source of options.sources) {
        try {
          const state = await options.store.getCatchUpState(source);
          if (state?.succeededAt != null) this.set({ source }, Math.max(0, (options.clock.now() - state.succeededAt) / 1000));
        } catch (error) {
          options.logger.warn({ err: error, source }, 'metrics: cannot read the catch-up state');
        }
      }
    },
  });
  return (count) => {
    if (count.result === 'done') caughtUp.inc({ source: count.source }, count.queued);
    else if (count.result === 'failed') failures.inc({ source: count.source, code: count.code.slice(0, 40) });
  };
}

import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../shared';

/** Waivers in force now, read at scrape time so every replica sharing a store reports the same figure. */
export function registerWaiverGauge(registry: Registry, options: { countActive: () => Promise<number>; logger: Logger }): void {
  new Gauge({
    name: 'compliance_relay_waivers_active',
    help: 'Accepted exceptions (waivers) in force now, stored and from WAIVERS_FILE.',
    registers: [registry],
    async collect() {
      try {
        this.set(await options.countActive());
      } catch (error) {
        options.logger.warn({ err: error }, 'metrics: cannot count the waivers in force');
      }
    },
  });
}

import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { SourceConfig } from './sources-file';

/** Whether a source's catch-up runs: `on` with its cadence, or `off` with the reason in the setting's own words. */
export type CatchUpPlan = { on: true; everyMs: number; max: number } | { on: false; reason: string };

/**
 * Decides once whether the relay fetches a source's missed reports from NetBox: it needs the source's
 * NetBox URL and token (validity's list is read with it) and a cadence that is not `off`.
 */
export function planCatchUp(source: Pick<SourceConfig, 'name' | 'netbox' | 'catchUp'>): CatchUpPlan {
  const isDefault = source.name === DEFAULT_SOURCE_NAME;
  const name = (env: string, field: string) => (isDefault ? env : `${field} of ${source.name} in SOURCES_FILE`);
  if (source.catchUp.everyMs === null) return { on: false, reason: `${name('CATCH_UP_EVERY', 'catch_up_every')} is off` };
  if (!source.netbox.url) return { on: false, reason: `${name('NETBOX_URL', 'netbox_url')} is not set: there is no NetBox to ask` };
  if (!source.netbox.token)
    return { on: false, reason: `${name('NETBOX_TOKEN', 'token_file or token_env')} is not set: NetBox lists reports only to a token` };
  return { on: true, everyMs: source.catchUp.everyMs, max: source.catchUp.max };
}

/** One line for check-config and the start log: "every 5m, at most 20 mailed per run" or "off: why". */
export function describeCatchUp(plan: CatchUpPlan): string {
  if (!plan.on) return `off: ${plan.reason}`;
  return `every ${formatMs(plan.everyMs)}, at most ${plan.max} missed reports mailed per run`;
}

function formatMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

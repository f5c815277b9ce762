import type { WatchdogState, WatchdogStateName } from './types';

/** The `watchdog_state` row as both engines read it. */
export interface WatchdogRow {
  state: WatchdogStateName;
  since: number | null;
  created_at: number;
  changed_at: number;
  version: number;
}

/** Turns the row into the state the Store interface returns. */
export function decodeWatchdogRow(row: WatchdogRow): WatchdogState {
  return { state: row.state, since: row.since, createdAt: row.created_at, changedAt: row.changed_at, version: row.version };
}

import { WATCHDOG_KEY_PREFIX, type NewDelivery } from '../store';

/** One watchdog mail, as stored in the outbox (JSON in the delivery's body). */
export interface WatchdogAlert {
  kind: 'overdue' | 'resumed';
  /** The last report before the silence (or the watchdog's start when none ever came), epoch ms. */
  silentSince: number;
  /** `resumed`: when the report that ended the silence arrived. */
  resumedAt?: number;
  expectEveryMs: number;
  detectedAt: number;
  /** The named NetBox source that went silent; absent: the default source. */
  source?: string;
  /**
   * With catch-up on: when the relay last listed NetBox's reports successfully (null: not yet). A check
   * after the silence began means NetBox has no report either, not that a webhook was lost. Absent: catch-up off.
   */
  netboxCheckedAt?: number | null;
}

/** The JSON key that marks a body as a watchdog record (a NetBox body never has it). */
const MARK = 'compliance_relay_watchdog';

/**
 * The outbox record for a watchdog mail. Its dedup key names the silence it is about, so even
 * outside the compare-and-set two records for the same silence would collapse into one.
 */
export function buildWatchdogAlert(alert: WatchdogAlert): NewDelivery {
  const since = new Date(alert.silentSince).toISOString();
  return {
    kind: 'watchdog',
    dedupKey: `${WATCHDOG_KEY_PREFIX}${alert.source ? `${alert.source}/` : ''}${alert.kind}@${since}`,
    reportId: 0,
    reportCreated: since,
    completedAt: new Date(alert.detectedAt).toISOString(),
    source: 'watchdog',
    body: Buffer.from(JSON.stringify({ [MARK]: alert }), 'utf8'),
    receivedAt: alert.detectedAt,
    ...(alert.source ? { netboxSource: alert.source } : {}),
  };
}

/** The alert in a stored body, or undefined when the body is a NetBox delivery. */
export function parseWatchdogAlert(dedupKey: string, body: Buffer): WatchdogAlert | undefined {
  if (!dedupKey.startsWith(WATCHDOG_KEY_PREFIX)) return undefined;
  try {
    const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[MARK] as WatchdogAlert | undefined;
    return value && (value.kind === 'overdue' || value.kind === 'resumed') ? value : undefined;
  } catch {
    return undefined;
  }
}

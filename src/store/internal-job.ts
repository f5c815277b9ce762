import { DIGEST_KEY_PREFIX, WATCHDOG_KEY_PREFIX, type DeliveryKind, type DigestPeriod, type NewDelivery } from './types';

/** One digest to send: its period's row, less the delivery it is queued as. */
export type DigestJob = Omit<DigestPeriod, 'deliveryId'>;

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
  /** With catch-up on: when the relay last listed NetBox's reports successfully (null: not yet). Absent: catch-up off. */
  netboxCheckedAt?: number | null;
}

/** The catch-up's notice of missed reports not mailed one by one, or deleted by NetBox first; a watchdog delivery. */
export interface MissedReportsNotice {
  kind: 'missed';
  /** The named NetBox source; absent: the default source. */
  source?: string;
  detectedAt: number;
  /** How many missed reports this catch-up queued to be mailed one by one. */
  mailed: number;
  /** Missed reports not mailed (older than the newest mailed), oldest first, with their page in NetBox. */
  skipped: { id: number; created: string; link: string }[];
  /** Ids of missed reports NetBox no longer has (validity keeps the newest `store_reports`), ascending. */
  deleted: number[];
  /** Ids of missed reports whose fields fail the checks a webhook's report must pass (not mailed), ascending. */
  refused?: number[];
}

/** A job of the relay's own, queued in the outbox as a delivery: a digest, a watchdog mail, the catch-up's notice. */
export type InternalJob =
  { kind: 'digest'; job: DigestJob } | { kind: 'watchdog'; alert: WatchdogAlert } | { kind: 'missed'; notice: MissedReportsNotice };

type Stored = Record<string, unknown>;
const isDigestJob = (v: Stored) => typeof v.route === 'string' && typeof v.periodStart === 'number' && typeof v.periodEnd === 'number';
const isAlert = (v: Stored) => v.kind === 'overdue' || v.kind === 'resumed';
const isNotice = (v: Stored) => v.kind === 'missed';

/** How each job is stored; its body's JSON key `compliance_relay_<mark>` is never in a NetBox body. */
const STORED = {
  digest: { kind: 'digest', source: 'digest', prefix: DIGEST_KEY_PREFIX, mark: 'digest', field: 'job', is: isDigestJob },
  watchdog: { kind: 'watchdog', source: 'watchdog', prefix: WATCHDOG_KEY_PREFIX, mark: 'watchdog', field: 'alert', is: isAlert },
  missed: { kind: 'watchdog', source: 'catch-up', prefix: WATCHDOG_KEY_PREFIX, mark: 'missed_reports', field: 'notice', is: isNotice },
} as const satisfies Record<InternalJob['kind'], { kind: DeliveryKind; [key: string]: unknown }>;

const iso = (ms: number) => new Date(ms).toISOString();
const sourcePrefix = (source?: string) => (source ? `${source}/` : '');

/** The outbox record of a job; its key names the job (digest period, silence, reports named), so it is queued once. */
export function buildJobDelivery(job: InternalJob): NewDelivery {
  const { kind, source, prefix, mark, field } = STORED[job.kind];
  const payload = (job as Record<string, unknown>)[field];
  const record = (key: string, reportCreated: string, completedAt: string, receivedAt: number, netboxSource?: string): NewDelivery => ({
    kind,
    dedupKey: `${prefix}${key}`,
    reportCreated,
    completedAt,
    receivedAt,
    sender: source,
    body: Buffer.from(JSON.stringify({ [`compliance_relay_${mark}`]: payload }), 'utf8'),
    ...(netboxSource ? { source: netboxSource } : {}),
  });
  if (job.kind === 'digest') {
    const { route, periodStart, periodEnd, queuedAt } = job.job;
    return record(`${route}@${iso(periodStart)}`, iso(periodStart), iso(periodEnd), queuedAt);
  }
  if (job.kind === 'watchdog') {
    const { alert } = job;
    const since = iso(alert.silentSince);
    return record(`${sourcePrefix(alert.source)}${alert.kind}@${since}`, since, iso(alert.detectedAt), alert.detectedAt, alert.source);
  }
  const { notice } = job;
  const ids = [...notice.skipped.map((r) => r.id), ...notice.deleted, ...(notice.refused ?? [])].sort((a, b) => a - b);
  const at = iso(notice.detectedAt);
  return record(`${sourcePrefix(notice.source)}missed@${ids[0]}-${ids.at(-1)}`, at, at, notice.detectedAt, notice.source);
}

/** The job a stored delivery holds, or undefined when it holds none (a NetBox report's body, say). */
export function parseJobDelivery(dedupKey: string, body: Buffer): InternalJob | undefined {
  let stored: Stored | null;
  try {
    const ours = dedupKey.startsWith(DIGEST_KEY_PREFIX) || dedupKey.startsWith(WATCHDOG_KEY_PREFIX);
    stored = ours ? (JSON.parse(body.toString('utf8')) as Stored | null) : null;
  } catch {
    return undefined;
  }
  for (const kind of Object.keys(STORED) as InternalJob['kind'][]) {
    const { prefix, mark, field, is } = STORED[kind];
    const value = stored?.[`compliance_relay_${mark}`] as Stored | undefined;
    if (dedupKey.startsWith(prefix) && typeof value === 'object' && value !== null && is(value))
      return { kind, [field]: value } as unknown as InternalJob;
  }
  return undefined;
}

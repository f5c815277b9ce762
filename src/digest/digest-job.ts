import { DIGEST_KEY_PREFIX, type NewDelivery } from '../store';

/** One digest to send, as stored in the outbox (JSON in the delivery's body). */
export interface DigestJob {
  route: string;
  /** Reports received at or after this time (epoch ms) and before `periodEnd` are in the digest. */
  periodStart: number;
  /** The schedule's tick that closed the period. */
  periodEnd: number;
  /** Queued well after its tick: the relay was not running then. */
  late: boolean;
  queuedAt: number;
}

/** The JSON key that marks a body as a digest job (a NetBox body never has it). */
const MARK = 'compliance_relay_digest';

/** The outbox record of a digest: its dedup key is its digest_periods row's (route, period start), so it is queued once. */
export function buildDigestJob(job: DigestJob): NewDelivery {
  const start = new Date(job.periodStart).toISOString();
  return {
    kind: 'digest',
    dedupKey: `${DIGEST_KEY_PREFIX}${job.route}@${start}`,
    reportId: 0,
    reportCreated: start,
    completedAt: new Date(job.periodEnd).toISOString(),
    source: 'digest',
    body: Buffer.from(JSON.stringify({ [MARK]: job }), 'utf8'),
    receivedAt: job.queuedAt,
  };
}

/** The job in a stored body, or undefined when the body is not a digest's. */
export function parseDigestJob(dedupKey: string, body: Buffer): DigestJob | undefined {
  if (!dedupKey.startsWith(DIGEST_KEY_PREFIX)) return undefined;
  try {
    const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[MARK] as DigestJob | undefined;
    return value && typeof value.route === 'string' && typeof value.periodStart === 'number' && typeof value.periodEnd === 'number'
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

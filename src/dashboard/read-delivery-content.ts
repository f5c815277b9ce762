import { parseJobDelivery, type DeliveryRecord, type InternalJob, type Store } from '../store';
import type { ReportCounts } from '../report';
import { parseDelivery, type ReportFields } from '../webhook';

export type DeliveryContent =
  { kind: 'report'; report: ReportFields; counts: ReportCounts } | InternalJob | { kind: 'other'; reason: string };

/**
 * What a delivery holds: a report from the typed fields parsed at ingest, so a listing loads no body.
 * Only a record without them (the watchdog's, a digest's, a report stored before migration 6) loads its body.
 */
export async function readDeliveryContent(record: DeliveryRecord, store: Pick<Store, 'getDeliveryBody'>): Promise<DeliveryContent> {
  if (record.report && record.counts) return { kind: 'report', report: record.report, counts: record.counts };
  const { dedupKey } = record;
  const body = await store.getDeliveryBody(record.id);
  if (!body) return { kind: 'other', reason: 'the stored body is gone' };
  const job = parseJobDelivery(dedupKey, body);
  if (job) return job;
  try {
    const parsed = parseDelivery(body);
    return parsed.kind === 'report'
      ? { kind: 'report', report: parsed.report, counts: parsed.counts }
      : { kind: 'other', reason: parsed.reason };
  } catch (error) {
    return { kind: 'other', reason: (error as Error).message };
  }
}

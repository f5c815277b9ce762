import type { DeliveryRecord, Store } from '../store';
import type { ReportCounts } from '../report';
import { parseDelivery, type ReportFields } from '../webhook';
import { parseMissedReportsNotice, parseWatchdogAlert, type MissedReportsNotice, type WatchdogAlert } from '../watchdog';
import { parseDigestJob, type DigestJob } from '../digest';

export type DeliveryContent =
  | { kind: 'report'; report: ReportFields; counts: ReportCounts }
  | { kind: 'watchdog'; alert: WatchdogAlert }
  | { kind: 'missed'; notice: MissedReportsNotice }
  | { kind: 'digest'; job: DigestJob }
  | { kind: 'other'; reason: string };

/**
 * What a delivery holds: a report from the typed fields parsed at ingest, so a listing loads no body.
 * Only a record without them (the watchdog's, a digest's, a report stored before migration 6) loads its body.
 */
export async function readDeliveryContent(record: DeliveryRecord, store: Pick<Store, 'getDeliveryBody'>): Promise<DeliveryContent> {
  if (record.report) return { kind: 'report', report: record.report.report, counts: record.report.counts };
  const { dedupKey } = record;
  const body = await store.getDeliveryBody(record.id);
  if (!body) return { kind: 'other', reason: 'the stored body is gone' };
  const notice = parseMissedReportsNotice(dedupKey, body);
  if (notice) return { kind: 'missed', notice };
  const alert = parseWatchdogAlert(dedupKey, body);
  if (alert) return { kind: 'watchdog', alert };
  const job = parseDigestJob(dedupKey, body);
  if (job) return { kind: 'digest', job };
  try {
    const parsed = parseDelivery(body);
    return parsed.kind === 'report'
      ? { kind: 'report', report: parsed.report, counts: parsed.counts }
      : { kind: 'other', reason: parsed.reason };
  } catch (error) {
    return { kind: 'other', reason: (error as Error).message };
  }
}

import { buildSourceSeriesKey } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { NewDelivery } from './types';

/**
 * A report to store, as the webhook stores it, from its one parse (its source assigned): its typed fields, and its place in its
 * series, so that its row in the trend's history is written with it (the next report of the series
 * compares with it before it is mailed, and it is marked late when a newer one was stored first).
 * Whatever queues a report (the webhook, a catch-up that fetched one from NetBox) builds it here.
 */
export function buildNewDelivery(
  delivery: ReportDelivery,
  options: {
    /** The exact bytes received (or built from NetBox's answer), kept for audit and preview. */
    body: Buffer;
    /** Who sent it (the client address). */
    sender: string;
    receivedAt: number;
    /** The source's NETBOX_URL; absent without one. */
    netboxUrl?: string;
  },
): NewDelivery {
  return {
    dedupKey: delivery.dedupKey,
    reportId: delivery.report.id,
    reportCreated: delivery.report.created,
    completedAt: delivery.completedAt,
    source: options.sender,
    body: options.body,
    receivedAt: options.receivedAt,
    // The one parse of this body: the store keeps its typed fields, so no reader parses it again.
    report: delivery,
    series: buildSourceSeriesKey({ source: delivery.source, netboxUrl: options.netboxUrl, reportUrl: delivery.report.url }),
  };
}

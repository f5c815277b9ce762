import { buildSourceSeriesKey } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { NewDelivery } from './types';

/**
 * A report to store, from its one parse (its source assigned), with its series, so that its history row
 * is written with it. Whatever queues a report (the webhook, a catch-up) builds it here.
 */
export function buildNewDelivery(
  delivery: ReportDelivery,
  options: {
    /** The exact bytes received (or built from NetBox's answer). */
    body: Buffer;
    /** The client address. */
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
    report: delivery,
    series: buildSourceSeriesKey({ source: delivery.source, netboxUrl: options.netboxUrl, reportUrl: delivery.report.url }),
  };
}

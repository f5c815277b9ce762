import { buildSourceSeriesKey } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { NewDelivery } from './types';

/**
 * A report to store: its one parse (its source assigned) with how it arrived and its series, so that its
 * history row is written with it. Whatever queues a report (the webhook, a catch-up) builds it here.
 */
export function buildNewDelivery(
  delivery: ReportDelivery,
  arrival: Pick<NewDelivery, 'body' | 'sender' | 'receivedAt'> & { netboxUrl?: string },
): NewDelivery {
  const { netboxUrl, ...rest } = arrival;
  const series = buildSourceSeriesKey({ source: delivery.source, netboxUrl, reportUrl: delivery.report.url });
  return { ...delivery, ...rest, series };
}

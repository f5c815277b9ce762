import { findNetboxBasePath } from '../report';
import { DEFAULT_SOURCE_NAME, type ReportDelivery } from '../webhook';
import type { FailingPair, ReportSnapshot } from './types';

/**
 * The series a report belongs to: "previous report" means the previous one of the same NetBox, so the
 * series is the NetBox URL plus the base path the report's own `url` carries (`/netbox/api/...` →
 * `/netbox`). The sender's IP address is NOT used: NetBox's RQ workers change address on every container
 * or pod restart, which would cut every trend. A named source's reports form a history of their own
 * (report ids collide across NetBoxes); the default source keeps the series it had before sources.
 */
export function buildSourceSeriesKey(options: { source: string; netboxUrl?: string; reportUrl: string }): string {
  const netboxSeries = `${options.netboxUrl ?? 'netbox'}|${findNetboxBasePath(options.reportUrl)}`;
  return options.source === DEFAULT_SOURCE_NAME ? netboxSeries : `source:${options.source}|${netboxSeries}`;
}

export function buildReportSnapshot(delivery: ReportDelivery, series: string, failing: FailingPair[] | null): ReportSnapshot {
  const r = delivery.report;
  return {
    dedupKey: delivery.dedupKey,
    series,
    reportId: r.id,
    created: r.created,
    createdMs: Date.parse(r.created),
    counts: delivery.counts,
    failing,
  };
}

import { findNetboxBasePath } from '../report';
import { DEFAULT_SOURCE_NAME, type ReportDelivery } from '../webhook';
import type { FailingPair, ReportSnapshot } from './types';

/**
 * A report's series: the NetBox URL plus the base path in the report's `url`. Not the sender's IP: RQ workers change it on
 * every restart. A named source has its own (report ids collide across NetBoxes); the default keeps its old key.
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

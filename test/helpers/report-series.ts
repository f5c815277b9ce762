import type { FailingPair, ReportSnapshot } from '../../src/trend';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from './netbox-json';

/** One report of a test series: its id and the (device, test) pairs that failed. */
export interface SeriesStep {
  id: number;
  failing: FailingPair[];
}

/** How the reports of a series are shaped: as many results per severity, on as many devices, created when. */
export interface SeriesShape {
  resultsPerSeverity: number;
  deviceCount: number;
  createdOf: (id: number) => string;
}

/**
 * The three views of a series' report the mail tests need, all from its failing pairs: the counts NetBox
 * sends, the snapshot the history keeps, and the delivery as the webhook parses it (NetBox's own bytes).
 */
export function createReportSeries(shape: SeriesShape) {
  const n = shape.resultsPerSeverity;
  const countsOf = (failing: FailingPair[]): ReportSnapshot['counts'] => {
    const failed = (severity: string) => failing.filter((p) => p.severity === severity).length;
    return {
      overall: { passed: 3 * n - failing.length, count: 3 * n },
      HIGH: { passed: n - failed('HIGH'), count: n },
      MIDDLE: { passed: n - failed('MIDDLE'), count: n },
      LOW: { passed: n - failed('LOW'), count: n },
    };
  };
  const snapshotOf = (step: SeriesStep): ReportSnapshot => {
    const created = shape.createdOf(step.id);
    return {
      dedupKey: `${step.id}@${created}`,
      series: 's',
      reportId: step.id,
      created,
      createdMs: Date.parse(created),
      counts: countsOf(step.failing),
      failing: step.failing,
    };
  };
  const deliveryOf = (step: SeriesStep): ReportDelivery => {
    const c = countsOf(step.failing);
    const data = buildReportData({
      id: step.id,
      device_count: shape.deviceCount,
      test_count: 3,
      total_passed: c.overall.passed,
      total_count: c.overall.count,
      high_passed: c.HIGH.passed,
      high_count: c.HIGH.count,
      middle_passed: c.MIDDLE.passed,
      middle_count: c.MIDDLE.count,
      low_passed: c.LOW.passed,
      low_count: c.LOW.count,
      created: shape.createdOf(step.id),
    });
    const d = parseDelivery(buildBody({ data }));
    if (d.kind !== 'report') throw new Error('not a report');
    return d;
  };
  return { countsOf, snapshotOf, deliveryOf };
}

import { buildTrendChart, type TrendChart, type TrendChartPoint } from '../mail';
import { mapCountLines } from '../report';
import type { ReportPoint, ReportSnapshot } from '../trend';

/** The trend chart as the templates show it (`{{> trend-chart}}`, `{{> trend-chart-text}}`). */
export interface ChartView extends TrendChart {
  /** "62.5%". */
  currentText: string;
  /** What the shaded column is: "this report", "the latest report". */
  currentLabel: string;
}

/** The chart of the current report and the `earlier` reports of its series (oldest first): a few microseconds, no image. */
export function buildMailChart(current: ReportSnapshot, earlier: readonly ReportPoint[], overallText: string): ChartView {
  const points = [...earlier, current].map(toChartPoint);
  return { ...buildTrendChart({ points, currentIndex: points.length - 1 }), currentText: overallText, currentLabel: 'this report' };
}

/** A stored report as a point of the chart: pass ratios from its counts, null where it had no results. */
export function toChartPoint(snapshot: ReportPoint): TrendChartPoint {
  const c = snapshot.counts;
  return {
    reportId: snapshot.reportId,
    at: snapshot.created,
    ratios: mapCountLines((line) => (c[line].count > 0 ? c[line].passed / c[line].count : null)),
  };
}

import {
  buildSparkline,
  chooseChartRange,
  describeTrend,
  drawTrendChartPng,
  paintChartInThread,
  TREND_CHART_HEIGHT,
  TREND_CHART_WIDTH,
  type PaintChart,
  type TrendChartPoint,
  type TrendChartSeries,
  type MailAttachment,
} from '../mail';
import type { ReportCounts, ReportPoint, ReportSnapshot } from '../trend';

/** The trend chart as the templates show it (`{{> trend-chart}}`, `{{> trend-chart-text}}`). */
export interface ChartView {
  /** `cid:…`: the inline PNG carried by the mail. */
  src: string;
  alt: string;
  /** CSS pixels (the PNG is twice as large). */
  width: number;
  height: number;
  /** Reports plotted, the current one included. */
  reports: number;
  /** The overall pass ratio of each plotted report in block characters, oldest first, on the chart's y range. */
  sparkline: string;
  /** That range, "80–100%": the sparkline's lowest and highest block. */
  rangeText: string;
  /** The current report's overall pass percentage ("62.5%"). */
  currentText: string;
}

/** A drawn chart as a mail's inline attachment. */
export type ChartAttachment = MailAttachment;

/** The chart once per report: its view and the inline attachment a route's mail carries when its template shows it. */
export interface MailChart {
  view: ChartView;
  /**
   * The PNG as an inline attachment, drawn (on the painter thread) at the first call and kept for the
   * other routes: a report whose routes all turn the chart off (`chart: false`) never draws one.
   */
  attachment(): Promise<ChartAttachment>;
  /** The Content-ID, without `cid:`: a rendered HTML that does not reference it leaves the attachment out. */
  cid: string;
}

/**
 * Draws the current report and the `earlier` reports of its series (oldest first) as the mail's chart.
 * The Content-ID comes from the report, so a retry and a preview carry the same one.
 */
export function buildMailChart(
  current: ReportSnapshot,
  earlier: readonly ReportPoint[],
  overallText: string,
  paint: PaintChart = paintChartInThread,
): MailChart {
  const points = [...earlier, current].map(toChartPoint);
  const series = { points, currentIndex: points.length - 1 };
  const range = chooseChartRange(points);
  const cid = `trend-chart.${current.reportId}.${current.createdMs}@compliance-relay`;
  let attachment: ReturnType<MailChart['attachment']> | undefined;
  const draw = () => drawChartAttachment(series, { filename: `report-${current.reportId}-trend.png`, cid }, paint);
  return {
    cid,
    view: {
      src: `cid:${cid}`,
      alt: describeTrend(series),
      width: TREND_CHART_WIDTH,
      height: TREND_CHART_HEIGHT,
      reports: points.length,
      sparkline: buildSparkline(
        points.map((p) => p.ratios.overall ?? null),
        range,
      ),
      rangeText: `${Math.round(range.low * 100)}\u2013${Math.round(range.high * 100)}%`,
      currentText: overallText,
    },
    attachment: () => (attachment ??= draw()),
  };
}

/** A chart drawn as the inline PNG a mail carries (`cid:` in its HTML): report and digest mails alike. */
export async function drawChartAttachment(
  series: TrendChartSeries,
  name: { filename: string; cid: string },
  paint: PaintChart,
): Promise<ChartAttachment> {
  // An image with a Content-ID goes in-line (MailComposer's own default for it).
  return { ...name, content: await drawTrendChartPng(series, paint), contentType: 'image/png' };
}

/** A stored report as a point of the chart: pass ratios from its counts, null where it had no results. */
export function toChartPoint(snapshot: ReportPoint): TrendChartPoint {
  const c: ReportCounts = snapshot.counts;
  const ratio = (passed: number, count: number) => (count > 0 ? passed / count : null);
  return {
    reportId: snapshot.reportId,
    at: snapshot.created,
    ratios: {
      overall: ratio(c.totalPassed, c.totalCount),
      HIGH: ratio(c.highPassed, c.highCount),
      MIDDLE: ratio(c.middlePassed, c.middleCount),
      LOW: ratio(c.lowPassed, c.lowCount),
    },
  };
}

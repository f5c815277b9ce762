import type { Logger } from '../shared';
import {
  buildMessage,
  buildMessageId,
  buildOutgoingMail,
  buildThreadId,
  ChartPainterError,
  describeTrend,
  paintChartInThread,
  TREND_CHART_HEIGHT,
  TREND_CHART_WIDTH,
  type OutgoingMail,
  type PaintChart,
  type Recipients,
  type Renderer,
  type TrendChartSeries,
} from '../mail';
import { buildDigestView, type DigestContent, type DigestView } from './build-digest-view';
import { drawChartAttachment, type ChartAttachment } from './build-mail-chart';

/** The template set a digest route renders unless it names its own (`template`). */
export const DIGEST_TEMPLATE_SET = 'digest';

export interface DigestMailOptions {
  renderer: Renderer;
  from: string;
  recipients: Recipients;
  /** The outbox record (its id and key make the Message-ID, stable across retries). */
  deliveryId: number;
  dedupKey: string;
  date: Date;
  /** The route's `template` and `subject`, when it sets them. */
  template?: string;
  subject?: string;
  /** Paints the charts; absent: the painter thread. */
  paintChart?: PaintChart;
  /** Where a chart that cannot be drawn is reported (the digest goes without it). */
  log?: Logger;
}

/**
 * A digest's mail: the digest template set rendered with the period's view, marked automatic like
 * the report mails, and with X-Compliance-Digest naming the route for client-side filters.
 */
export async function buildDigestMail(content: DigestContent, options: DigestMailOptions): Promise<OutgoingMail> {
  const view = buildDigestView(content);
  const charts = placeDigestCharts(view, `${content.route}.${content.periodStart}`, options.paintChart ?? paintChartInThread);
  const render = () =>
    options.renderer.render(
      view,
      options.template ?? DIGEST_TEMPLATE_SET,
      options.subject === undefined ? {} : { subject: options.subject },
    );
  let rendered = render();
  // Drawn only for a template that shows them (a set of one's own may leave the charts out).
  const drawn = await Promise.all(charts.filter((c) => rendered.html.includes(`cid:${c.cid}`)).map((c) => drawOrLeaveOut(c, options.log)));
  const attachments = drawn.filter((a): a is ChartAttachment => a !== undefined);
  // A chart that could not be drawn is left out of the HTML too (no broken image): rendered again without it.
  if (attachments.length < drawn.length) rendered = render();
  const mail = buildMessage({
    rendered,
    from: options.from,
    recipients: options.recipients,
    messageId: buildMessageId({
      deliveryId: options.deliveryId,
      reportId: null,
      dedupKey: options.dedupKey,
      from: options.from,
      route: content.route,
    }),
    date: options.date,
    // The route's digests stack in one conversation, as a route's reports do.
    threadId: buildThreadId({ from: options.from, route: content.route }),
    headers: {
      'X-Compliance-Digest': content.route,
      'X-Compliance-Digest-Period': `${new Date(content.periodStart).toISOString()}/${new Date(content.periodEnd).toISOString()}`,
      ...(content.late ? { 'X-Compliance-Digest-Late': 'true' } : {}),
    },
    attachments,
  });
  return buildOutgoingMail(mail);
}

/** One series' chart in a digest: its Content-ID, its PNG drawn when asked, and how to take it out of the view. */
interface DigestChart {
  cid: string;
  draw: () => Promise<ChartAttachment>;
  leaveOut: () => void;
}

/**
 * A chart's PNG, or undefined when it cannot be drawn: as in a report mail, the digest goes without that
 * chart rather than not at all. The painter thread stopping is not the chart's fault: that fails the
 * digest's mail, to be retried with its charts (ChartPainterError, `CHART_PAINTER`).
 */
async function drawOrLeaveOut(chart: DigestChart, log: Logger | undefined): Promise<ChartAttachment | undefined> {
  try {
    return await chart.draw();
  } catch (error) {
    if (error instanceof ChartPainterError) throw error;
    log?.warn({ error: (error as Error).message, cid: chart.cid }, 'digest goes without one of its charts: it could not be drawn');
    chart.leaveOut();
    return undefined;
  }
}

/**
 * Gives each series of the digest its chart over the period (the report mails' chart: pass ratio per
 * severity, the latest report marked) as a `cid:` image; the PNGs are drawn only when asked. The
 * Content-IDs come from the route and period, so a retry and `preview --digest` carry the same ones.
 */
function placeDigestCharts(view: DigestView, key: string, paint: PaintChart): DigestChart[] {
  const charts: DigestChart[] = [];
  view.digest.sources.forEach((source, s) =>
    source.series.forEach((series, i) => {
      const points = series.chart.points;
      if (points.length === 0) return;
      const percent = (v: number | null) => (v === null ? null : v / 100);
      const chart: TrendChartSeries = {
        points: points.map((p) => ({
          reportId: p.reportId,
          at: p.created,
          ratios: {
            overall: percent(p.ratios.overall),
            HIGH: percent(p.ratios.HIGH),
            MIDDLE: percent(p.ratios.MIDDLE),
            LOW: percent(p.ratios.LOW),
          },
        })),
        currentIndex: points.length - 1,
      };
      const cid = `digest-chart.${key}.${s}-${i}@compliance-relay`;
      series.chart.image = { src: `cid:${cid}`, alt: describeTrend(chart), width: TREND_CHART_WIDTH, height: TREND_CHART_HEIGHT };
      const filename = `digest-chart-${s + 1}-${i + 1}.png`;
      charts.push({
        cid,
        draw: () => drawChartAttachment(chart, { filename, cid }, paint),
        leaveOut: () => {
          series.chart.image = null;
        },
      });
    }),
  );
  return charts;
}

import { buildWebUrl, COUNT_LINES, formatDateTime, formatPercentValue, mapCountLines } from '../report';
import type { PeriodPoint, SeriesPeriodTrend, Trend } from '../trend';
import { buildMessageId, buildOutgoingMail, buildThreadId, TREND_CHART_MAX_REPORTS, type OutgoingMail, type Renderer } from '../mail';
import type { Route } from '../routing';
import type { DeliveryRecord, DigestJob } from '../store';
import { buildRouteRecipients } from './report-composer';
import { buildMailChart } from './create-report-insights';
import { buildVerdictView, count, formatAccepted, formatDeltaShort, TREND_LISTED_MAX } from './build-trend-view';

/** What a digest is about, gathered from the store (digest/) for its job's period. */
export interface DigestContent extends DigestJob {
  /** The route's digest.timezone, else MAIL_TIMEZONE. */
  timezone: string;
  sources: { source: string; series: SeriesPeriodTrend[] }[];
  /** The series beyond the cap on sections (the least failing): one table row each, from its latest report. */
  otherSeries?: { source: string; series: string; reportCount: number; latest: PeriodPoint }[];
  /** Configured NetBox sources from which no report at all arrived in the period. */
  silentSources: string[];
}

/** Reports listed per series in a digest (an hourly series has 168 a week: the chart shows them all). */
const DIGEST_REPORTS_LISTED = 10;

/** The view of a digest mail (templates/README.md documents each field). */
export function buildDigestView(content: DigestContent) {
  const at = (ms: number) => formatMinutes(new Date(ms).toISOString(), content.timezone);
  const sources = content.sources.map((s) => ({ name: s.source, series: s.series.map((t) => buildSeriesView(t, content.timezone)) }));
  const otherSeries = (content.otherSeries ?? []).map((o) => ({
    source: o.source,
    name: nameSeries(o.series),
    reportCount: o.reportCount,
    latest: { reportId: o.latest.reportId, createdText: formatMinutes(o.latest.created, content.timezone) },
    percentText: formatPercentValue(o.latest.ratios.overall),
    failed: o.latest.failed.overall,
  }));
  const all = sources.flatMap((s) => s.series);
  const reportCount = [...all, ...otherSeries].reduce((n, s) => n + s.reportCount, 0);
  return {
    digest: {
      defaultSubject: buildDigestSubject(content, all, reportCount),
      route: content.route,
      periodStartText: at(content.periodStart),
      periodEndText: at(content.periodEnd),
      timezone: content.timezone,
      late: content.late,
      queuedAtText: at(content.queuedAt),
      reportCount,
      noReports: reportCount === 0,
      sources,
      otherSeries,
      silentSources: content.silentSources,
    },
  };
}

function buildSeriesView(trend: SeriesPeriodTrend, timezone: string) {
  const change = trend.change;
  const deltas = change.overall ? [change.overall, ...change.severities] : [];
  // The trend's deltas are in COUNT_LINES' order.
  const ratios = COUNT_LINES.map((key, i) => {
    const delta = deltas[i];
    return {
      name: key === 'overall' ? 'Overall' : key,
      percentText: formatPercentValue(trend.latest.ratios[key]),
      changeText: delta?.deltaPointsText ?? '—',
      delta: formatDeltaShort(delta ?? null),
      direction: delta?.direction ?? 'same',
      failed: trend.latest.failed[key],
    };
  });
  const baseline = trend.baseline;
  // The series key ends with NETBOX_URL and the report's base path.
  const [netboxUrl, basePath = ''] = trend.series.split('|').slice(-2);
  const latestPath = `/plugins/validity/reports/${trend.latest.reportId}/`;
  return {
    name: nameSeries(trend.series),
    verdict: buildVerdictView(change, ratios[0].percentText),
    latestUrl: /^https?:\/\//.test(netboxUrl) ? buildWebUrl(basePath, latestPath, netboxUrl) : null,
    // Accepted exceptions are counted apart, in `waived`.
    highFailed: trend.latest.failed.HIGH - change.leftOut.HIGH,
    reportCount: trend.points.length,
    latest: { reportId: trend.latest.reportId, createdText: formatMinutes(trend.latest.created, timezone) },
    reports: [...trend.points]
      .reverse()
      .slice(0, DIGEST_REPORTS_LISTED)
      .map((p) => ({
        reportId: p.reportId,
        createdText: formatMinutes(p.created, timezone),
        percentText: formatPercentValue(p.ratios.overall),
      })),
    moreReports: Math.max(0, trend.points.length - DIGEST_REPORTS_LISTED),
    baselineText: baseline ? `report ${baseline.reportId} (${baseline.inPeriod ? "the period's first" : 'before the period'})` : null,
    ratios,
    failingKnown: change.failingSetKnown,
    newlyFailing: change.newlyFailing.slice(0, TREND_LISTED_MAX),
    newlyFailingCount: change.newlyFailing.length,
    fixed: change.fixed.slice(0, TREND_LISTED_MAX),
    fixedCount: change.fixed.length,
    evaluationNote: describeUnevaluated(change),
    worstDevices: trend.worstDevices,
    waived: trend.waived,
    chart: buildChartView(trend.points, timezone),
  };
}

/** The line about pairs that stopped or started failing where a side was not evaluated (or not known). */
function describeUnevaluated(change: Trend): string | null {
  const stopped = change.notEvaluated.length + change.undeterminedCount;
  const started = change.notEvaluatedBefore.length + change.undeterminedBeforeCount;
  const parts = [
    stopped > 0
      ? `${count(stopped, 'result')} that failed at the start stopped failing without a passing result (not evaluated, or not known): not counted as fixed`
      : '',
    started > 0
      ? `${count(started, 'failing result')} had no passing result before (new, not evaluated, or not known): not counted as newly failing`
      : '',
  ].filter(Boolean);
  return parts.length ? `${parts.join('; ')}.` : null;
}

/** Verdicts from the most to the least urgent: a digest of several series is named by its most urgent. */
const URGENCY = ['worse', 'mixed', 'better', 'same', 'first'] as const;

/** `Worse: 83.3% (−7.4), 5 HIGH failing — digest weekly · 7 reports`; several series: the most urgent verdict and how many share it. */
function buildDigestSubject(content: DigestContent, series: ReturnType<typeof buildSeriesView>[], reportCount: number): string {
  const late = content.late ? '[late] ' : '';
  const tail = ` \u2014 digest ${content.route} \u00b7 ${count(reportCount, 'report')}`;
  if (series.length === 0) return `${late}No reports${tail}`;
  const high = series.reduce((n, s) => n + s.highFailed, 0);
  const failing = `${high > 0 ? `${high} HIGH failing` : 'no HIGH failing'}${formatAccepted(series.reduce((n, s) => n + s.waived, 0))}`;
  const [one] = series;
  if (series.length === 1) return `${late}${one.verdict.word}: ${one.ratios[0].percentText}${one.ratios[0].delta}, ${failing}${tail}`;
  const worst = URGENCY.find((v) => series.some((s) => s.verdict.direction === v))!;
  const sharing = series.filter((s) => s.verdict.direction === worst);
  return `${late}${sharing[0].verdict.word}: ${sharing.length} of ${series.length} NetBoxes, ${failing}${tail}`;
}

/** The period's chart over its last reports: a week of hourly reports would not fit a phone. */
function buildChartView(points: readonly PeriodPoint[], timezone: string) {
  const listed = points.map((p) => ({ ...p, createdText: formatMinutes(p.created, timezone) }));
  const shown = points.slice(-TREND_CHART_MAX_REPORTS);
  const chart =
    shown.length > 0
      ? buildMailChart(
          shown.map((p) => ({ reportId: p.reportId, at: p.created, ratios: mapCountLines((line) => toRatio(p.ratios[line])) })),
          formatPercentValue(shown[shown.length - 1].ratios.overall),
          'the latest report',
        )
      : null;
  const table = shown.length > 1 ? chart : null;
  return { points: listed, charted: shown.length, sparkline: chart?.sparkline ?? '', rangeText: chart?.rangeText ?? '', table };
}

const toRatio = (percent: number | null) => (percent === null ? null : percent / 100);

/** A date and time to the minute: a digest spans days, its seconds are noise. */
const formatMinutes = (iso: string, timezone: string): string => formatDateTime(iso, timezone).replace(/(\d\d:\d\d):\d\d/, '$1');

const nameSeries = (series: string) => series.split('|').slice(-2).join('') || series;

/** The template set a digest route renders unless it names its own (`template`). */
export const DIGEST_TEMPLATE_SET = 'digest';

/** A digest's mail to its route; its outbox record's id and key make the Message-ID, stable across retries. */
export async function buildDigestMail(
  content: DigestContent,
  route: Route,
  options: { renderer: Renderer; from: string; delivery: Pick<DeliveryRecord, 'id' | 'dedupKey'>; date: Date },
): Promise<OutgoingMail> {
  const rendered = options.renderer.render(
    buildDigestView(content),
    route.template ?? DIGEST_TEMPLATE_SET,
    route.subject === undefined ? {} : { subject: route.subject },
  );
  const { from, delivery } = options;
  return buildOutgoingMail({
    ...rendered,
    ...buildRouteRecipients(route, null),
    from,
    messageId: buildMessageId({ deliveryId: delivery.id, reportId: null, dedupKey: delivery.dedupKey, from, route: content.route }),
    date: options.date,
    // The route's digests stack in one conversation, as a route's reports do.
    threadId: buildThreadId({ from, route: content.route }),
    headers: {
      'X-Compliance-Digest': content.route,
      'X-Compliance-Digest-Period': `${new Date(content.periodStart).toISOString()}/${new Date(content.periodEnd).toISOString()}`,
      ...(content.late ? { 'X-Compliance-Digest-Late': 'true' } : {}),
    },
  });
}

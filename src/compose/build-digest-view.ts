import { formatDateTime } from '../report';
import type { FailingPair, PeriodPoint, SeriesPeriodTrend } from '../trend';

/** One NetBox source's series over a digest's period. */
export interface DigestSourceContent {
  source: string;
  series: SeriesPeriodTrend[];
}

/** A series beyond the digest's cap on sections: one table row, from its latest report (no section, no chart). */
export interface DigestSeriesSummary {
  source: string;
  series: string;
  reportCount: number;
  latest: PeriodPoint;
}

/** What a digest is about, gathered from the store (digest/): the view below is built from it. */
export interface DigestContent {
  route: string;
  /** Reports received at or after `periodStart` and before `periodEnd` (epoch ms) are in it. */
  periodStart: number;
  periodEnd: number;
  /** Queued well after its tick (the relay was not running then). */
  late: boolean;
  queuedAt: number;
  /** The zone the dates are written in (the route's digest.timezone, else MAIL_TIMEZONE). */
  timezone: string;
  sources: DigestSourceContent[];
  /** The series beyond the cap on sections (the least failing), one row each; absent or empty: none. */
  otherSeries?: DigestSeriesSummary[];
  /** Configured NetBox sources from which no report at all arrived in the period (the watchdog's view). */
  silentSources: string[];
}

/** One line of a series' figures: overall or one severity. */
export interface DigestRatioView {
  name: string;
  percentText: string;
  /** "+2.5 pts" against the period's baseline, "—" without one. */
  changeText: string;
  direction: 'better' | 'worse' | 'same';
  failed: number;
}

/** The chart's data for one series (the PNG is drawn from it; the sparkline below is its text form). */
export interface DigestChartView {
  points: (PeriodPoint & { createdText: string })[];
  /** "▂▄▇█" over the overall pass percentage, scaled between its lowest and highest value. */
  sparkline: string;
  /** "92.0%–96.5%": the range the sparkline is scaled on. */
  rangeText: string;
  /** The period's chart as an inline PNG (set by the digest's mail; null in a bare view). */
  image: DigestChartImage | null;
}

/** The chart of a series over the period, as `<img>` attributes: `src` is the `cid:` of the PNG the mail carries. */
export interface DigestChartImage {
  src: string;
  alt: string;
  /** CSS pixels (the PNG is twice as large). */
  width: number;
  height: number;
}

export interface DigestSeriesView {
  /** The NetBox (and base path) the series' reports came from. */
  name: string;
  reportCount: number;
  latest: { reportId: number; createdText: string };
  /** The period's newest reports, newest first (at most {@link DIGEST_REPORTS_LISTED}), and how many older ones are not listed. */
  reports: { reportId: number; createdText: string; percentText: string }[];
  moreReports: number;
  /** "report 41 (before the period)", or "report 42 (the period's first)"; null for a lone first report. */
  baselineText: string | null;
  ratios: DigestRatioView[];
  failingKnown: boolean;
  newlyFailing: FailingPair[];
  newlyFailingCount: number;
  fixed: FailingPair[];
  fixedCount: number;
  worstDevices: { device: string; failing: number; high: number }[];
  chart: DigestChartView;
}

/** Everything a digest template can use (templates/README.md documents each field). */
export interface DigestView {
  digest: {
    route: string;
    periodStartText: string;
    periodEndText: string;
    timezone: string;
    late: boolean;
    queuedAtText: string;
    reportCount: number;
    noReports: boolean;
    sources: { name: string; series: DigestSeriesView[] }[];
    /** The series summarised in one table row each (beyond the cap on sections and charts). */
    otherSeries: {
      source: string;
      name: string;
      reportCount: number;
      latest: { reportId: number; createdText: string };
      percentText: string;
      failed: number;
    }[];
    silentSources: string[];
  };
}

const BLOCKS = '▁▂▃▄▅▆▇█';

/** Reports listed per series in a digest (an hourly series has 168 a week: the chart shows them all). */
export const DIGEST_REPORTS_LISTED = 10;

/** The view of a digest mail: dates in the digest's zone, figures as the report mails write them. */
export function buildDigestView(content: DigestContent): DigestView {
  const at = (ms: number) => formatDateTime(new Date(ms).toISOString(), content.timezone);
  const sources = content.sources.map((s) => ({ name: s.source, series: s.series.map((t) => buildSeriesView(t, content.timezone)) }));
  const otherSeries = (content.otherSeries ?? []).map((o) => ({
    source: o.source,
    name: nameSeries(o.series),
    reportCount: o.reportCount,
    latest: { reportId: o.latest.reportId, createdText: formatDateTime(o.latest.created, content.timezone) },
    percentText: o.latest.ratios.overall === null ? '—' : `${o.latest.ratios.overall.toFixed(1)}%`,
    failed: o.latest.failed.overall,
  }));
  const reportCount =
    sources.reduce((sum, s) => sum + s.series.reduce((n, t) => n + t.reportCount, 0), 0) +
    otherSeries.reduce((n, o) => n + o.reportCount, 0);
  return {
    digest: {
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

function buildSeriesView(trend: SeriesPeriodTrend, timezone: string): DigestSeriesView {
  const change = trend.change;
  const latest = trend.latest.ratios;
  const deltas = change.overall ? [change.overall, ...change.severities] : [];
  const ratios = (['overall', 'HIGH', 'MIDDLE', 'LOW'] as const).map((key) => {
    const delta = deltas.find((d) => (key === 'overall' ? d.name === 'Overall' : d.name === key));
    const pct = latest[key];
    return {
      name: key === 'overall' ? 'Overall' : key,
      percentText: pct === null ? '—' : `${pct.toFixed(1)}%`,
      changeText: delta?.deltaPointsText ?? '—',
      direction: delta?.direction ?? 'same',
      failed: trend.latest.failed[key],
    };
  });
  const baseline = trend.baseline;
  return {
    name: nameSeries(trend.series),
    reportCount: trend.points.length,
    latest: { reportId: trend.latest.reportId, createdText: formatDateTime(trend.latest.created, timezone) },
    reports: [...trend.points]
      .reverse()
      .slice(0, DIGEST_REPORTS_LISTED)
      .map((p) => ({
        reportId: p.reportId,
        createdText: formatDateTime(p.created, timezone),
        percentText: p.ratios.overall === null ? '—' : `${p.ratios.overall.toFixed(1)}%`,
      })),
    moreReports: Math.max(0, trend.points.length - DIGEST_REPORTS_LISTED),
    baselineText: baseline ? `report ${baseline.reportId} (${baseline.inPeriod ? "the period's first" : 'before the period'})` : null,
    ratios,
    failingKnown: change.failingSetKnown,
    newlyFailing: change.newlyFailing,
    newlyFailingCount: change.newlyFailingCount,
    fixed: change.fixed,
    fixedCount: change.fixedCount,
    worstDevices: trend.worstDevices,
    chart: buildChartView(trend.points, timezone),
  };
}

/** The sparkline: one block per report, scaled between the period's lowest and highest overall percentage. */
function buildChartView(points: readonly PeriodPoint[], timezone: string): DigestChartView {
  const values = points.map((p) => p.ratios.overall).filter((v): v is number => v !== null);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const block = (v: number | null) => {
    if (v === null) return ' ';
    if (high === low) return BLOCKS[BLOCKS.length - 1];
    return BLOCKS[Math.round(((v - low) / (high - low)) * (BLOCKS.length - 1))];
  };
  return {
    points: points.map((p) => ({ ...p, createdText: formatDateTime(p.created, timezone) })),
    sparkline: points.map((p) => block(p.ratios.overall)).join(''),
    rangeText: values.length === 0 ? '—' : low === high ? `${low.toFixed(1)}%` : `${low.toFixed(1)}%–${high.toFixed(1)}%`,
    image: null,
  };
}

/** `https://netbox.example.com/netbox` from a series key (`[source:<name>|]<NetBox URL>|<base path>`). */
function nameSeries(series: string): string {
  const parts = series.split('|');
  return parts.slice(-2).join('') || series;
}

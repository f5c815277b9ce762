import { bandOf, buildLinks, formatDateTime, formatPercent, passPercent, type Band, type ReportLinks } from '../report';
import type { ReportDelivery } from '../webhook';
import type { EnrichmentView, TrendView } from './build-insight-views';

/** One line of the summary: overall or one severity. */
export interface RatioView {
  name: string;
  passed: number;
  failed: number;
  count: number;
  /** "62.5%" or "—". */
  percentText: string;
  /** 0–100 with one decimal, or null when count is 0. */
  percent: number | null;
  /** Width of the bar's filled part in whole percent (0–100), for table cells. */
  barWidth: number;
  band: Band;
  hasResults: boolean;
}


/** Everything a template can use. templates/README.md documents each field. */
export interface ReportView {
  report: { id: number; display: string; deviceCount: number; testCount: number; created: string; customFields: Record<string, unknown> };
  completedAt: string;
  completedAtText: string;
  timezone: string;
  triggeredBy: string | null;
  overall: RatioView;
  severities: RatioView[];
  highFailed: number;
  hasFailures: boolean;
  links: ReportLinks;
  /** The subject line the default template builds; templates may ignore it. */
  defaultSubject: string;
  /**
   * What failed, from NetBox's results API (see EnrichmentView); null when the relay did not try
   * (a preview, or a caller without NetBox). Always present: templates run in strict mode.
   */
  enrichment: EnrichmentView | null;
  /** The change since the previous report (see TrendView); null when no history is kept. Always present. */
  trend: TrendView | null;
}

export interface ReportViewOptions {
  /** NetBox's base URL; links stay relative without it. */
  netboxUrl?: string;
  timezone: string;
  enrichment?: EnrichmentView | null;
  trend?: TrendView | null;
}

/** Builds the template data for one report delivery. Pure: same input, same view. */
export function buildReportView(delivery: ReportDelivery, options: ReportViewOptions): ReportView {
  const r = delivery.report;
  const ratio = (name: string, passed: number, count: number): RatioView => {
    const percent = passPercent(passed, count);
    return {
      name,
      passed,
      failed: count - passed,
      count,
      percentText: formatPercent(passed, count),
      percent,
      barWidth: percent === null ? 0 : Math.round(percent),
      band: bandOf(percent),
      hasResults: count > 0,
    };
  };
  const severities = [ratio('HIGH', r.high_passed, r.high_count), ratio('MIDDLE', r.middle_passed, r.middle_count), ratio('LOW', r.low_passed, r.low_count)];
  const overall = ratio('Overall', r.total_passed, r.total_count);
  const highFailed = r.high_count - r.high_passed;
  const display = r.display ?? `report-${r.id}`;
  const subjectCore = `Compliance report ${r.id}: ${r.total_passed}/${r.total_count} passed (${overall.percentText})`;
  return {
    report: {
      id: r.id,
      display,
      deviceCount: r.device_count,
      testCount: r.test_count,
      created: r.created,
      customFields: r.custom_fields ?? {},
    },
    completedAt: delivery.completedAt,
    completedAtText: formatDateTime(delivery.completedAt, options.timezone),
    timezone: options.timezone,
    triggeredBy: delivery.triggeredBy ?? null,
    overall,
    severities,
    highFailed,
    hasFailures: r.total_passed < r.total_count,
    links: buildLinks(r.id, r.url, r.results_url, options.netboxUrl),
    defaultSubject: highFailed > 0 ? `[${highFailed} HIGH failed] ${subjectCore}` : subjectCore,
    enrichment: options.enrichment ?? null,
    trend: options.trend ?? null,
  };
}

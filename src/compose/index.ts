export { buildOwnerGroupView, buildReportView, type ReportView } from './build-report-view';
export { buildEnrichmentView, CSV_ATTACHMENT_MAX_BYTES, MAX_FAILING_TESTS_LISTED } from './build-enrichment-view';
export { buildTrendView } from './build-trend-view';
export { toChartPoint, type ChartView } from './build-mail-chart';
export { createReportInsights, CHART_REPORTS, type ReportInsightsOptions } from './create-report-insights';
export { verifyRouteTemplates } from './verify-route-templates';
export { SAMPLE_ENVELOPE, sampleDeliveryView, sampleDigestContents, sampleInsightViews } from './sample';
export {
  createReportComposer,
  buildFilterHeaders,
  UnreadableDeliveryError,
  type ComposedReport,
  type ComposedNotice,
  type ComposedMail,
  type ReportComposer,
  type RouteContext,
} from './report-composer';
export { buildDigestView, type DigestContent, type DigestSourceContent } from './build-digest-view';
export { buildDigestMail, DIGEST_TEMPLATE_SET } from './build-digest-mail';
export { renderWithinBudget, MAIL_HTML_MAX_BYTES } from './render-within-budget';

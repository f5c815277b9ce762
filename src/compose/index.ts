export { buildReportView, type ReportView } from './build-report-view';
export { buildEnrichmentView, buildTrendView } from './build-insight-views';
export { toChartPoint, type ChartView } from './build-mail-chart';
export {
  createReportInsights,
  CHART_REPORTS,
  CSV_ATTACHMENT_MAX_BYTES,
  MAX_FAILING_TESTS_LISTED,
  type ReportInsightsOptions,
} from './create-report-insights';
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
} from './report-composer';
export { buildDigestView, type DigestContent, type DigestSourceContent } from './build-digest-view';
export { buildDigestMail, DIGEST_TEMPLATE_SET } from './build-digest-mail';
export { buildOwnerGroupView } from './build-owner-view';
export { renderWithinBudget, MAIL_HTML_MAX_BYTES } from './render-within-budget';

export { buildOwnerGroupView, buildReportView, type ReportView } from './build-report-view';
export { buildEnrichmentView, CSV_ATTACHMENT_MAX_BYTES, MAX_FAILING_TESTS_LISTED } from './build-enrichment-view';
export { buildTrendView } from './build-trend-view';
export { createReportInsights, toChartPoint, CHART_REPORTS, type ChartView, type ReportInsightsOptions } from './create-report-insights';
export { readSampleBody, readSampleDelivery, sampleDigestContents, sampleInsightViews, verifyRouteTemplates } from './sample';
export {
  createReportComposer,
  buildFilterHeaders,
  renderWithinBudget,
  MAIL_HTML_MAX_BYTES,
  UnreadableDeliveryError,
  type ComposedReport,
  type ComposedNotice,
  type ComposedMail,
  type ReportComposer,
} from './report-composer';
export { buildDigestMail, buildDigestView, DIGEST_TEMPLATE_SET, type DigestContent } from './build-digest-view';
export { createNoticeComposer } from './build-notice-mail';

export { buildVerdictView, type VerdictView } from './build-verdict-view';
export { buildReportView, type ReportView, type RatioView, type ReportViewOptions } from './build-report-view';
export {
  buildEnrichmentView,
  buildTrendView,
  type EnrichmentView,
  type TrendView,
  type FailingTestView,
  type SeverityGroupView,
  type DeviceFailuresView,
  type ResultLinkView,
  type AttachmentView,
  type PairView,
  type StreakView,
  type EnrichmentViewOptions,
  type TrendViewOptions,
} from './build-insight-views';
export { buildMailChart, toChartPoint, type ChartView } from './build-mail-chart';
export { createReportInsights, type ReportInsights, type ReportInsightsOptions } from './create-report-insights';
export { verifyRouteTemplates } from './verify-route-templates';
export { SAMPLE_ENVELOPE, sampleDeliveryView, sampleInsightViews } from './sample';
export {
  createReportComposer,
  buildFilterHeaders,
  UnreadableDeliveryError,
  type DeliveryComposer,
  type ReportComposerOptions,
  type ComposedReport,
  type ComposedNotice,
  type ComposedMail,
  type ReportComposer,
  type RouteContext,
} from './report-composer';
export {
  buildDigestView,
  type DigestContent,
  type DigestSourceContent,
  type DigestSeriesSummary,
  type DigestView,
  type DigestSeriesView,
  type DigestRatioView,
  type DigestChartView,
} from './build-digest-view';
export { buildDigestMail, DIGEST_TEMPLATE_SET, type DigestMailOptions } from './build-digest-mail';
export { sampleDigestContents } from './sample-digest';
export { buildOwnerGroupView } from './build-owner-view';
export type { OwnersView } from './build-report-view';
export { renderWithinBudget, MAIL_HTML_MAX_BYTES } from './render-within-budget';

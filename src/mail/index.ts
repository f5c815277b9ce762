export { formatPercent, passPercent, roundHalfEven1, bandOf, NO_RESULTS, type Band } from './percent';
export { buildReportView, buildLinks, absoluteUrl, formatDateTime, netboxBasePath, buildWebUrl, SEVERITIES, type ReportView, type RatioView, type LinksView, type Severity, type ReportViewOptions } from './report-view';
export { loadRenderer, TemplateError, DEFAULT_TEMPLATE_SET, type Renderer, type RenderedMail } from './renderer';
export { createRenderPool, defaultRenderThreads, type RenderPool } from './render-pool';
export { buildMessage, buildMessageId, buildThreadId, type MessageInput, type Recipients } from './build-message';
export { createTransport, createSmtpTransport, createFileTransport, type MailTransport, type SendResult, type TransportSettings } from './transport';
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
} from './insights-view';

export {
  defaultTemplatesDir,
  loadRenderer,
  buildCompiledTemplatesFile,
  registerTemplateHelpers,
  TemplateError,
  type Renderer,
  type RenderedMail,
} from './renderer';
export { buildMessageId, buildThreadId } from './build-outgoing-mail';
export { buildOutgoingMail, type MailAttachment, type OutgoingMail, type Recipients } from './build-outgoing-mail';
export { COMPILED_TEMPLATES_FILE } from './compiled-templates-file';
export {
  buildTrendChart,
  buildSparkline,
  chooseChartRange,
  describeTrend,
  TREND_CHART_MAX_REPORTS,
  TREND_CHART_STRIP_PX,
  type TrendChartPoint,
} from './build-trend-chart';

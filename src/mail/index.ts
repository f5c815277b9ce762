export { defaultTemplatesDir } from './default-templates-dir';
export {
  loadRenderer,
  buildInlinedCssFile,
  buildCompiledTemplatesFile,
  registerTemplateHelpers,
  TemplateError,
  DEFAULT_TEMPLATE_SET,
  type Renderer,
  type RendererOptions,
  type RenderedMail,
} from './renderer';
export { buildMessage, buildMessageId, buildThreadId, type MessageInput, type Recipients } from './build-message';
export type { MailAttachment, MailContent } from './mail-content';
export { buildOutgoingMail } from './build-outgoing-mail';
export { INLINED_CSS_FILE } from './inlined-css-file';
export { COMPILED_TEMPLATES_FILE } from './compiled-templates-file';
export {
  buildTrendChart,
  buildSparkline,
  chooseChartRange,
  describeTrend,
  TREND_CHART_LINES,
  TREND_CHART_MAX_REPORTS,
  TREND_CHART_STRIP_PX,
  type ChartRange,
  type TrendChart,
  type TrendChartCell,
  type TrendChartLine,
  type TrendChartPoint,
  type TrendChartRow,
  type TrendChartSeries,
} from './build-trend-chart';
export { embedRawInlineImages } from './embed-raw-inline-images';
export { describeMailError, type MailErrorFacts } from './describe-mail-error';
export type { OutgoingMail } from './outgoing-mail';

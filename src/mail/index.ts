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
  buildTrendChartSvg,
  buildSparkline,
  chooseChartRange,
  type ChartRange,
  describeTrend,
  TREND_CHART_LINES,
  TREND_CHART_MARKER_COLOUR,
  TREND_CHART_WIDTH,
  TREND_CHART_HEIGHT,
  TREND_CHART_PIXEL_RATIO,
  TREND_CHART_PLOT,
  TREND_CHART_MAX_BYTES,
  type TrendChart,
  type TrendChartLine,
  type TrendChartPoint,
  type TrendChartSeries,
  drawTrendChartPng,
} from './build-trend-chart';
export { paintChartInThread, stopChartPainter, ChartPainterError, PAINTER_COLLECT_EVERY_CHARTS, type PaintChart } from './paint-chart';
export { embedRawInlineImages } from './embed-raw-inline-images';
export { describeMailError, type MailErrorFacts } from './describe-mail-error';
export type { OutgoingMail } from './outgoing-mail';

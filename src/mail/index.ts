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
export {
  createTransport,
  createSmtpTransport,
  createFileTransport,
  type MailTransport,
  type SendResult,
  type TransportSettings,
  type TransportIo,
} from './transport';
export { createAccessTokenFetcher, OAuth2Error, type AccessToken, type FetchAccessToken } from './fetch-access-token';
export { createTokenCache, TOKEN_REFRESH_BEFORE_EXPIRY_MS, type TokenCache } from './create-token-cache';
export { createGraphTransport, classifyGraphResponse, parseRetryAfterMs, GraphError } from './create-graph-transport';
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
export { embedInlineImages, embedRawInlineImages } from './embed-inline-images';
export { describeMailError, type MailErrorFacts } from './describe-mail-error';
export type { OutgoingMail } from './outgoing-mail';

export { defaultTemplatesDir } from './default-templates-dir';
export {
  loadRenderer,
  buildInlinedCssFile,
  registerTemplateHelpers,
  TemplateError,
  DEFAULT_TEMPLATE_SET,
  type Renderer,
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
} from './transport';
export { INLINED_CSS_FILE } from './inlined-css-file';

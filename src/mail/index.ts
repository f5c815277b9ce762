export { loadRenderer, TemplateError, DEFAULT_TEMPLATE_SET, type Renderer, type RenderedMail } from './renderer';
export { createRenderPool, defaultRenderThreads, type RenderPool } from './render-pool';
export { buildMessage, buildMessageId, buildThreadId, type MessageInput, type Recipients } from './build-message';
export { createTransport, createSmtpTransport, createFileTransport, type MailTransport, type SendResult, type TransportSettings } from './transport';

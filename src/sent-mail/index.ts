export { buildRawMessage, type RawMessage } from './build-raw-message';
export { createMailRecorder, type MailRecorder } from './create-mail-recorder';

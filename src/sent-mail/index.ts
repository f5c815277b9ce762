export { createMailRecorder, type MailRecorder } from './create-mail-recorder';

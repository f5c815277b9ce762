import { createFileNotifier } from './create-file-notifier';
import type { TransportDescriptor } from './notifier';

/** `.eml` files in the outbox directory: what the relay does when no other transport is configured. */
export const fileTransport: TransportDescriptor = {
  name: 'file',
  selects: () => true,
  create: (settings) => createFileNotifier(settings.mail.outboxDir),
  describeStart: (settings) => `.eml files in ${settings.mail.outboxDir}`,
  describeVerified: (settings) => `No SMTP_URL: mails are written to ${settings.mail.outboxDir}, which is writable.`,
};

import { createFileNotifier } from './create-file-notifier';
import type { TransportDescriptor } from './notifier';

/** Where `.eml` files go: DATA_DIR/mail. */
export interface FileConfig {
  outboxDir: string;
}

/** `.eml` files in the outbox directory: what the relay does when no other transport is configured. */
export const fileTransport: TransportDescriptor<'file', FileConfig> = {
  name: 'file',
  settings: {},
  configure: (_env, context) => ({ outboxDir: context.outboxDir }),
  create: (file) => createFileNotifier(file.outboxDir),
  describeStart: (file) => `.eml files in ${file.outboxDir}`,
  describeVerified: (file) => `No SMTP_URL: mails are written to ${file.outboxDir}, which is writable.`,
  // One file at a time: a disk gains nothing from more.
  concurrency: () => 1,
  secrets: () => [],
  failures: {},
};

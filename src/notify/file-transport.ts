import fs from 'node:fs';
import path from 'node:path';
import type { Sender, TransportDescriptor } from './notifier';

/** `.eml` files in the outbox directory (DATA_DIR/mail): what the relay does when no other transport is configured. */
export const fileTransport: TransportDescriptor<'file', { outboxDir: string }, Record<never, never>> = {
  name: 'file',
  settings: {},
  configure: (_env, context) => ({ outboxDir: context.outboxDir }),
  // Named from the Message-ID, so a retried send overwrites rather than duplicates; written aside, then renamed.
  create: ({ outboxDir: dir }): Sender => ({
    async send(mail) {
      await fs.promises.mkdir(dir, { recursive: true });
      const name = `${mail.messageId.replace(/^<|>$/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
      const file = path.join(dir, name);
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.promises.writeFile(tmp, mail.raw);
      await fs.promises.rename(tmp, file);
      return { response: `written to ${file}`, path: file };
    },
    async verify(onStep) {
      await fs.promises.mkdir(dir, { recursive: true });
      await fs.promises.access(dir, fs.constants.W_OK);
      onStep?.(`${dir} is writable`);
    },
    async close() {},
  }),
  describeStart: (file) => `.eml files in ${file.outboxDir}`,
  describeStartWarnings: (file) => [
    { fields: { dir: file.outboxDir }, message: `SMTP_URL is not set: mails are written as .eml files under ${file.outboxDir}` },
  ],
  describeVerified: (file) => `No SMTP_URL: mails are written to ${file.outboxDir}, which is writable.`,
  describeConfig: () => ({ smtp: 'none: mails are written as .eml files' }),
  settingsInForce: () => [],
  // One file at a time: a disk gains nothing from more.
  concurrency: () => 1,
  secrets: () => [],
  failures: {},
};

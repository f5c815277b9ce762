import fs from 'node:fs';
import path from 'node:path';
import { buildFailedResult, type Notifier } from './notifier';

/**
 * Writes each mail as `<dir>/<name>.eml` (the mail's bytes, as an SMTP server would receive them).
 * The name comes from the Message-ID, so a retried send overwrites rather than duplicates, and the
 * file appears whole (written aside, then renamed).
 */
export function createFileNotifier(dir: string): Notifier {
  return {
    kind: 'file',
    async send(mail) {
      try {
        await fs.promises.mkdir(dir, { recursive: true });
        const name = `${mail.messageId.replace(/^<|>$/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
        const file = path.join(dir, name);
        const tmp = `${file}.${process.pid}.tmp`;
        await fs.promises.writeFile(tmp, mail.raw);
        await fs.promises.rename(tmp, file);
        return { status: 'sent', response: `written to ${file}`, path: file };
      } catch (error) {
        return buildFailedResult(error);
      }
    },
    async verify(onStep) {
      await fs.promises.mkdir(dir, { recursive: true });
      await fs.promises.access(dir, fs.constants.W_OK);
      onStep?.(`${dir} is writable`);
    },
    async close() {},
  };
}

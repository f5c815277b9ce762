import fs from 'node:fs';
import path from 'node:path';
import type { SendMailOptions } from 'nodemailer';
import { embedInlineImages } from '../mail';

/**
 * Writes a previewed mail as `subject.txt`, `mail.html`, `mail.txt` and `mail.eml` into `dir` (made if
 * missing). The HTML carries its inline images (the charts) as data: URIs, as a mail client shows
 * them, so the file opens whole in a browser.
 */
export function writePreviewFiles(dir: string, message: SendMailOptions, raw: Buffer | string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'subject.txt'), `${String(message.subject)}\n`);
  // The renderer makes both bodies strings (SendMailOptions would also allow a stream or a buffer).
  fs.writeFileSync(path.join(dir, 'mail.html'), embedInlineImages(message.html as string, message.attachments));
  fs.writeFileSync(path.join(dir, 'mail.txt'), message.text as string);
  fs.writeFileSync(path.join(dir, 'mail.eml'), raw);
}

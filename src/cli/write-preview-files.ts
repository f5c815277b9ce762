import fs from 'node:fs';
import path from 'node:path';
import { embedRawInlineImages, type OutgoingMail } from '../mail';

/**
 * Writes a previewed mail as `subject.txt`, `mail.html`, `mail.txt` and `mail.eml` into `dir` (made if
 * missing). The HTML carries its inline images (the charts) as data: URIs, as a mail client shows
 * them, so the file opens whole in a browser.
 */
export function writePreviewFiles(dir: string, mail: OutgoingMail): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'subject.txt'), `${mail.subject}\n`);
  fs.writeFileSync(path.join(dir, 'mail.html'), embedRawInlineImages(mail.html ?? '', mail.raw));
  fs.writeFileSync(path.join(dir, 'mail.txt'), mail.text ?? '');
  fs.writeFileSync(path.join(dir, 'mail.eml'), mail.raw);
}

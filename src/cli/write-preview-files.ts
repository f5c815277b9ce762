import fs from 'node:fs';
import path from 'node:path';
import { embedRawInlineImages, type OutgoingMail } from '../mail';
import type { CliIo } from './io';

/**
 * Writes a previewed mail as `subject.txt`, `mail.html`, `mail.txt` and `mail.eml` into `out` (made if
 * missing) and prints `headline`, the subject, the envelope and `details`. The HTML carries its inline
 * images (the charts) as data: URIs, as a mail client shows them, so the file opens whole in a browser.
 */
export function writePreviewFiles(io: CliIo, out: string, mail: OutgoingMail, headline: string, details = ''): void {
  const dir = path.resolve(io.cwd, out);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'subject.txt'), `${mail.subject}\n`);
  fs.writeFileSync(path.join(dir, 'mail.html'), embedRawInlineImages(mail.html ?? '', mail.raw));
  fs.writeFileSync(path.join(dir, 'mail.txt'), mail.text ?? '');
  fs.writeFileSync(path.join(dir, 'mail.eml'), mail.raw);
  io.stdout.write(
    `${headline}: ${mail.subject}\n` +
      `Envelope: from ${mail.envelope.from} to ${mail.envelope.to.join(', ')}\n` +
      details +
      `Wrote subject.txt, mail.html, mail.txt and mail.eml to ${dir}\n`,
  );
}

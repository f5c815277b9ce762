import type { SendMailOptions } from 'nodemailer';

/**
 * The HTML with each `cid:` reference to an inline attachment replaced by a `data:` URI of its bytes,
 * for a copy shown outside the mail (the `preview` command's mail.html, opened in a browser): the
 * same HTML a mail client (and mailparser) shows. The mail itself keeps `cid:`.
 */
export function embedInlineImages(html: string, attachments: SendMailOptions['attachments']): string {
  let out = html;
  for (const a of attachments ?? []) {
    if (!a.cid || !Buffer.isBuffer(a.content)) continue;
    const uri = `data:${a.contentType ?? 'application/octet-stream'};base64,${a.content.toString('base64')}`;
    out = out.split(`cid:${a.cid}`).join(uri);
  }
  return out;
}

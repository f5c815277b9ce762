/**
 * The HTML of a mail kept as its MIME bytes (the dashboard's copy of a sent mail, the `preview`
 * command's mail.html), whose HTML still says `cid:`, for a page shown outside a mail client: each base64 part with a Content-ID referenced by the HTML becomes a `data:` URI,
 * so the page shows the chart the recipient saw. Only the relay's own messages (nodemailer's layout:
 * a part's headers, a blank line, base64 lines, the next boundary) are read; anything else is left as is.
 */
export function embedRawInlineImages(html: string, raw: Buffer): string {
  if (!html.includes('cid:')) return html;
  const text = raw.toString('latin1');
  let out = html;
  for (const match of text.matchAll(/\r\nContent-ID: <([^>\r\n]+)>\r\n/gi)) {
    const cid = match[1];
    if (!out.includes(`cid:${cid}`)) continue;
    const start = text.lastIndexOf('\r\n--', match.index);
    const headersEnd = text.indexOf('\r\n\r\n', match.index);
    const bodyEnd = text.indexOf('\r\n--', headersEnd + 4);
    if (start < 0 || headersEnd < 0 || bodyEnd < 0) continue;
    const headers = text.slice(start, headersEnd);
    const type = /\r\nContent-Type:\s*([\w.+-]+\/[\w.+-]+)/i.exec(headers)?.[1];
    if (!type || !/\r\nContent-Transfer-Encoding:\s*base64\b/i.test(headers)) continue;
    const base64 = text.slice(headersEnd + 4, bodyEnd).replace(/\s+/g, '');
    out = out.split(`cid:${cid}`).join(`data:${type.toLowerCase()};base64,${base64}`);
  }
  return out;
}

/**
 * The HTML of a mail kept as its MIME bytes (a sent mail on the dashboard, `preview`'s mail.html) for a page
 * outside a mail client: each base64 part whose Content-ID the HTML references becomes a `data:` URI, so the
 * page shows the chart the recipient saw. Only the relay's own messages (nodemailer's layout: a part's
 * headers, a blank line, base64 lines, the next boundary) are read; anything else is left as is.
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

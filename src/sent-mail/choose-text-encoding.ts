import type { SendMailOptions } from 'nodemailer';

/** What nodemailer counts as binary or non-Latin, code unit by code unit (its own regex, without the `u` flag). */
function isNonLatin(code: number): boolean {
  return code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/**
 * nodemailer's own choice for one text value (MimeNode `_getTextEncoding`): quoted-printable when
 * Latin letters outnumber binary and non-Latin characters. Counted in one pass with no allocation;
 * nodemailer builds an array of every letter with two global regexes, which was 6 % of the relay's
 * CPU end to end (profile) for a 10 kB HTML body.
 */
export function prefersQuotedPrintable(value: string): boolean {
  let latin = 0;
  let nonLatin = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isAsciiLetter(code)) latin += 1;
    else if (isNonLatin(code)) nonLatin += 1;
  }
  return nonLatin < latin;
}

/** Header values nodemailer may encode as MIME words (RFC 2047): only those with `"` or non-ASCII ever are. */
function needsWordEncoding(value: string): boolean {
  return /["\u0080-\uFFFF]/.test(value);
}

/**
 * An attachment nodemailer encodes as base64 whatever the text encoding (a Buffer of a declared
 * non-text type, the trend chart's PNG say) and whose name it writes as it is (printable ASCII).
 */
function isBinaryWithPlainName(attachment: NonNullable<SendMailOptions['attachments']>[number]): boolean {
  const type = attachment.contentType ?? '';
  const plain = (v: unknown) => v === undefined || (typeof v === 'string' && /^[\x20-\x21\x23-\x7e]*$/.test(v));
  return (
    Buffer.isBuffer(attachment.content) &&
    type !== '' &&
    !/^(text|multipart|message)\//i.test(type) &&
    attachment.encoding === undefined &&
    attachment.raw === undefined &&
    attachment.headers === undefined &&
    plain(attachment.filename) &&
    plain(attachment.cid)
  );
}

/** An address field whose display names nodemailer writes as they are or quoted, never as encoded words. */
function isPlainAddressField(field: unknown): boolean {
  if (field === undefined) return true;
  const values = Array.isArray(field) ? (field as unknown[]) : [field];
  return values.every((v) => typeof v === 'string' && /^[\x20-\x7e]*$/.test(v));
}

/**
 * `quoted-printable` when that is what nodemailer would choose for every text value of `message`
 * anyway, so it need not detect it value by value; undefined otherwise (it detects, as before). The
 * bytes built are the same either way: only messages whose every content, and every header value it
 * would encode, prefers quoted-printable get it. Attachments and other parts leave it to nodemailer.
 */
export function chooseTextEncoding(message: SendMailOptions): 'quoted-printable' | undefined {
  if (!(message.attachments ?? []).every(isBinaryWithPlainName) || message.alternatives?.length || message.amp || message.watchHtml)
    return undefined;
  if (message.icalEvent) return undefined;
  for (const content of [message.html, message.text]) {
    if (content === undefined) continue;
    if (typeof content !== 'string' || !prefersQuotedPrintable(content)) return undefined;
  }
  const fields = [message.from, message.sender, message.to, message.cc, message.bcc, message.replyTo];
  if (!fields.every(isPlainAddressField)) return undefined;
  const headers = message.headers === undefined ? [] : Array.isArray(message.headers) ? undefined : Object.values(message.headers);
  if (headers === undefined) return undefined;
  for (const value of [message.subject, ...headers].flat()) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return undefined;
    if (needsWordEncoding(value) && !prefersQuotedPrintable(value)) return undefined;
  }
  return 'quoted-printable';
}

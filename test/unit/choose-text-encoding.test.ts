import type { SendMailOptions } from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { chooseTextEncoding, prefersQuotedPrintable } from '../../src/sent-mail/choose-text-encoding';

/** The bytes nodemailer builds for `message` (a fixed boundary, so two builds compare). */
function build(message: SendMailOptions): Promise<string> {
  const node = new MailComposer({ ...message, baseBoundary: 'fixed' } as SendMailOptions).compile();
  return new Promise((resolve, reject) => node.build((error, bytes) => (error ? reject(error) : resolve(bytes.toString('latin1')))));
}

const BASE: SendMailOptions = {
  from: 'Compliance Relay <relay@example.com>',
  to: ['ops@example.com'],
  subject: 'Compliance report 41/57 passed',
  messageId: '<1@example.com>',
  date: new Date(0),
  headers: { 'X-Compliance-Report-Id': '7' },
  text: 'Overall 71.9 % passed\n'.repeat(20),
  html: `<p style="color:#333">Overall <b>71.9 %</b> passed ${'x'.repeat(200)}</p>`,
};

describe('chooseTextEncoding', () => {
  it.each([
    ['a report mail (Latin text)', BASE, 'quoted-printable'],
    ['a subject in quotes and accents', { ...BASE, subject: 'Rapport "conformité" — ÉÉ' }, 'quoted-printable'],
    ['a Cyrillic subject (nodemailer picks base64)', { ...BASE, subject: 'Отчёт о соответствии' }, undefined],
    ['a mostly non-Latin body', { ...BASE, html: `<p>${'ж'.repeat(500)}</p>` }, undefined],
    ['a display name with non-ASCII', { ...BASE, from: 'Relais Ü <r@example.com>' }, undefined],
    ['an attachment', { ...BASE, attachments: [{ filename: 'f.csv', content: 'a,b\r\n' }] }, undefined],
    [
      "the trend chart's inline PNG (base64 whatever the text encoding)",
      {
        ...BASE,
        attachments: [
          {
            filename: 'report-7-trend.png',
            content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 0xff]),
            contentType: 'image/png',
            contentDisposition: 'inline' as const,
            cid: 'trend-chart.7.0@compliance-relay',
          },
        ],
      },
      'quoted-printable',
    ],
    [
      'a text attachment beside the PNG',
      {
        ...BASE,
        attachments: [
          { filename: 'a.png', content: Buffer.from([1, 2]), contentType: 'image/png' },
          { filename: 'f.csv', content: Buffer.from('a,b\r\n'), contentType: 'text/csv' },
        ],
      },
      undefined,
    ],
    [
      'a PNG named in non-ASCII',
      { ...BASE, attachments: [{ filename: 'Übersicht.png', content: Buffer.from([1]), contentType: 'image/png' }] },
      undefined,
    ],
  ])('%s: builds the same bytes as nodemailer detecting each value', async (_name, message, expected) => {
    const encoding = chooseTextEncoding(message);
    expect(encoding).toBe(expected);
    expect(await build(encoding ? { ...message, textEncoding: encoding } : message)).toBe(await build(message));
  });

  it('counts like nodemailer: Latin letters against binary and non-Latin code units', () => {
    expect(prefersQuotedPrintable('')).toBe(false);
    expect(prefersQuotedPrintable('ab\u00e9')).toBe(true);
    expect(prefersQuotedPrintable('a\u00e9\u00e9')).toBe(false);
    expect(prefersQuotedPrintable('12345 !?')).toBe(false);
    // An astral character is two UTF-16 code units, as nodemailer's regex (no `u` flag) counts it.
    expect(prefersQuotedPrintable('abc\u{1F600}')).toBe(true);
    expect(prefersQuotedPrintable('ab\u{1F600}')).toBe(false);
  });
});

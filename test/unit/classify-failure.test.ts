import { computeBackoffMs } from '../../src/delivery';
import { TemplateError } from '../../src/mail';
import { classifyFailure, classifyRenderFailure, FAILURE_CATALOGUE } from '../../src/notify';
import { readSmtpError } from '../../src/notify/smtp-failures';

/** A failed send as the SMTP transport hands it on (its reading of nodemailer's error), classified from the catalogue. */
const classifySmtp = (error: unknown) => classifyFailure(readSmtpError(error), FAILURE_CATALOGUE);

/** Errors shaped as nodemailer raises them: `code` and, for SMTP replies, `responseCode`. */
function smtpError(fields: { code?: string; responseCode?: number; message?: string }): Error {
  return Object.assign(new Error(fields.message ?? 'failed'), fields);
}

describe('classifyFailure: the one table of what a retry can fix', () => {
  const table: [string, unknown, { kind: 'transient' | 'permanent'; code: string; configProblem: boolean; scope: 'server' | 'message' }][] =
    [
      [
        '421 service not available',
        smtpError({ code: 'EENVELOPE', responseCode: 421 }),
        { kind: 'transient', code: 'SMTP_4XX', configProblem: false, scope: 'server' },
      ],
      [
        '451 local error (one message: retried alone)',
        smtpError({ code: 'EMESSAGE', responseCode: 451 }),
        { kind: 'transient', code: 'SMTP_4XX', configProblem: false, scope: 'message' },
      ],
      [
        '450 mailbox busy',
        smtpError({ code: 'EENVELOPE', responseCode: 450 }),
        { kind: 'transient', code: 'SMTP_4XX', configProblem: false, scope: 'message' },
      ],
      [
        '452 insufficient storage',
        smtpError({ code: 'EENVELOPE', responseCode: 452 }),
        { kind: 'transient', code: 'SMTP_4XX', configProblem: false, scope: 'message' },
      ],
      [
        'ECONNECTION',
        smtpError({ code: 'ECONNECTION' }),
        { kind: 'transient', code: 'ECONNECTION', configProblem: false, scope: 'server' },
      ],
      [
        'ECONNREFUSED',
        smtpError({ code: 'ECONNREFUSED' }),
        { kind: 'transient', code: 'ECONNREFUSED', configProblem: false, scope: 'server' },
      ],
      ['ETIMEDOUT', smtpError({ code: 'ETIMEDOUT' }), { kind: 'transient', code: 'ETIMEDOUT', configProblem: false, scope: 'server' }],
      ['ESOCKET', smtpError({ code: 'ESOCKET' }), { kind: 'transient', code: 'ESOCKET', configProblem: false, scope: 'server' }],
      ['EDNS', smtpError({ code: 'EDNS' }), { kind: 'transient', code: 'EDNS', configProblem: false, scope: 'server' }],
      ['EPROTOCOL', smtpError({ code: 'EPROTOCOL' }), { kind: 'transient', code: 'EPROTOCOL', configProblem: false, scope: 'message' }],
      [
        '550 mailbox unavailable',
        smtpError({ code: 'EENVELOPE', responseCode: 550 }),
        { kind: 'permanent', code: 'SMTP_5XX', configProblem: false, scope: 'message' },
      ],
      [
        '554 transaction failed',
        smtpError({ code: 'EMESSAGE', responseCode: 554 }),
        { kind: 'permanent', code: 'SMTP_5XX', configProblem: false, scope: 'message' },
      ],
      [
        'EENVELOPE without a reply',
        smtpError({ code: 'EENVELOPE' }),
        { kind: 'permanent', code: 'EENVELOPE', configProblem: false, scope: 'message' },
      ],
      [
        'EAUTH 535',
        smtpError({ code: 'EAUTH', responseCode: 535 }),
        { kind: 'transient', code: 'EAUTH', configProblem: true, scope: 'server' },
      ],
      [
        'EAUTH 454 (temporary auth failure)',
        smtpError({ code: 'EAUTH', responseCode: 454 }),
        { kind: 'transient', code: 'EAUTH', configProblem: true, scope: 'server' },
      ],
      ['ENOAUTH', smtpError({ code: 'ENOAUTH' }), { kind: 'transient', code: 'ENOAUTH', configProblem: true, scope: 'server' }],
      [
        '530 to MAIL FROM (authentication required)',
        smtpError({ code: 'EENVELOPE', responseCode: 530 }),
        { kind: 'transient', code: 'ENOAUTH', configProblem: true, scope: 'server' },
      ],
      [
        'STARTTLS refused with TLS required',
        smtpError({ code: 'SMTP_TLS_REQUIRED', responseCode: 502 }),
        { kind: 'transient', code: 'SMTP_TLS_REQUIRED', configProblem: true, scope: 'server' },
      ],
      [
        'self-signed certificate',
        smtpError({ code: 'ESOCKET', message: 'self-signed certificate' }),
        { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' },
      ],
      ['ETLS', smtpError({ code: 'ETLS' }), { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' }],
      [
        'an expired certificate (nodemailer says ESOCKET)',
        smtpError({ code: 'ESOCKET', message: 'certificate has expired' }),
        { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' },
      ],
      [
        'a certificate from an unknown CA, with its chain',
        smtpError({ code: 'ESOCKET', message: 'unable to get local issuer certificate' }),
        { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' },
      ],
      [
        "Node's own code for a certificate for another host",
        smtpError({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: "Hostname/IP does not match certificate's altnames" }),
        { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' },
      ],
      [
        'a 4xx reply that mentions a certificate is still a reply',
        smtpError({ code: 'EENVELOPE', responseCode: 454, message: '454 4.7.0 TLS not available: certificate problem' }),
        { kind: 'transient', code: 'SMTP_4XX', configProblem: false, scope: 'message' },
      ],
      [
        'template error',
        new TemplateError('html.hbs', new Error('"x" not defined')),
        { kind: 'transient', code: 'TEMPLATE', configProblem: true, scope: 'message' },
      ],
      ['unknown error', new Error('something odd'), { kind: 'transient', code: 'UNKNOWN', configProblem: false, scope: 'message' }],
      ['a thrown string', 'boom', { kind: 'transient', code: 'UNKNOWN', configProblem: false, scope: 'message' }],
    ];

  it.each(table)('%s', (_name, error, expected) => {
    expect(classifySmtp(error)).toMatchObject({ ...expected, message: expect.any(String) });
  });

  it('a 4xx that says when to come back (a rate limit) pauses the queue for that long; one that does not is not guessed', () => {
    // nodemailer's message for a refused DATA carries the server's reply.
    const reply = (responseCode: number, text: string) =>
      classifySmtp(smtpError({ code: 'EMESSAGE', responseCode, message: `Message failed: ${responseCode} ${text}` }));
    expect(reply(450, '4.7.1 Rate limit exceeded for relay@example.com, try again in 30 seconds')).toMatchObject({
      code: 'SMTP_4XX',
      scope: 'server',
      retryAfterMs: 30_000,
    });
    expect(reply(451, '4.7.1 Too many messages; please retry in 2 minutes')).toMatchObject({ scope: 'server', retryAfterMs: 120_000 });
    expect(reply(451, '4.7.1 Greylisting in action, please come back in 00:05:00')).toMatchObject({
      scope: 'server',
      retryAfterMs: 300_000,
    });
    // Gmail's, Exchange Online's and Postfix's words name no time: the 421 pauses with backoff, the others retry that message alone.
    for (const [code, text, scope] of [
      [421, '4.7.0 Try again later, closing connection.', 'server'],
      [451, '4.7.500 Server busy. Please try again later from [192.0.2.10]. (S77719)', 'message'],
      [450, '4.7.1 Error: too much mail from 192.0.2.10', 'message'],
      [
        450,
        '4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time.',
        'message',
      ],
    ] as const) {
      const failure = reply(code, text);
      expect(failure.scope).toBe(scope);
      expect(failure.retryAfterMs).toBeUndefined();
    }
  });

  it('keeps the SMTP answer in the message, on one line, and never a stack', () => {
    const c = classifySmtp(
      smtpError({
        code: 'EENVELOPE',
        responseCode: 550,
        message: 'Recipient refused',
        response: '550 5.1.1 <x@example.com>\r\n user unknown',
      } as never),
    );
    expect(c.message).toBe('Recipient refused (550 5.1.1 <x@example.com> user unknown)');
    expect(c.message).not.toMatch(/\n|at Object/);
  });

  it('composing: a template or render error is permanent', () => {
    expect(classifyRenderFailure(new TemplateError('html.hbs', new Error('"x" not defined')), FAILURE_CATALOGUE)).toMatchObject({
      kind: 'permanent',
      code: 'TEMPLATE',
    });
    expect(classifyRenderFailure(new Error('something odd'), FAILURE_CATALOGUE)).toMatchObject({ kind: 'permanent', code: 'RENDER' });
  });
});

describe('retry schedule', () => {
  const defaults = { maxAttempts: 48, baseMs: 60_000, maxDelayMs: 3_600_000 };

  it('grows exponentially up to the cap, with full jitter between 0 and the cap', () => {
    // random = 0.5: half of each cap (1, 2, 4, … min; capped at 1 h from the 7th attempt).
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => computeBackoffMs(n, defaults, () => 0.5))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000,
    ]);
    expect(computeBackoffMs(5, defaults, () => 0)).toBe(0);
  });

  it('the defaults (48 attempts, 1 min base, 1 h cap) give up after at most about 42 hours', () => {
    // The longest wait before each retry is its cap (random 1): 1+2+4+8+16+32 min, then 41 capped hours: 63 min + 41 h.
    let span = 0;
    for (let attempt = 1; attempt < defaults.maxAttempts; attempt += 1) span += computeBackoffMs(attempt, defaults, () => 1);
    expect(span).toBe((63 + 41 * 60) * 60_000);
  });
});

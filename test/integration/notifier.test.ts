import fs from 'node:fs';
import path from 'node:path';
import { buildOutgoingMail, type OutgoingMail } from '../../src/mail';
import { createNotifier, type Notifier, type NotifierIo, type SmtpConfig } from '../../src/notify';

const createSmtpNotifier = (settings: SmtpConfig, io: NotifierIo) => createNotifier({ name: 'smtp', settings }, io);
const createFileNotifier = (outboxDir: string) => createNotifier({ name: 'file', settings: { outboxDir } }, { readFile: fs.readFileSync });
import { makeTempDir } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates } from '../helpers/test-certificates';
import { REFUSED_PORT } from '../helpers/http-listener';

/** A small finished mail, as compose hands it to the notifier. */
function buildMail(): Promise<OutgoingMail> {
  return buildOutgoingMail({
    from: 'Compliance <relay@example.com>',
    to: ['netops@example.com'],
    cc: ['audit@example.com'],
    bcc: ['archive@example.com'],
    subject: 'Worse: 61.9% (\u22122.4) \u2014 report 43',
    text: 'Pass ratio 61.9 %\n',
    html: '<p>Pass ratio 61.9 %</p>',
    attachments: [],
    headers: { 'X-Compliance-Report-Id': '43' },
    messageId: '<report-43.d1.notifier@example.com>',
    date: new Date('2026-03-06T15:12:00Z'),
  });
}

function smtpConfig(url: string, overrides: Partial<SmtpConfig> = {}): SmtpConfig {
  return {
    url,
    user: undefined,
    password: undefined,
    caFile: undefined,
    requireTls: true,
    poolSize: 1,
    connectionTimeoutMs: 5_000,
    greetingTimeoutMs: 5_000,
    socketTimeoutMs: 5_000,
    oauth2: undefined,
    ...overrides,
  };
}

/** What the notifier answers for one mail; it must never reject. */
async function sendOnce(notifier: Notifier, mail: OutgoingMail): ReturnType<Notifier['send']> {
  try {
    return await notifier.send(mail);
  } finally {
    await notifier.close();
  }
}

describe('the SMTP notifier answers sent, retry or failed, and never rejects', () => {
  let peer: SmtpPeer | undefined;
  let mail: OutgoingMail;
  beforeAll(async () => {
    mail = await buildMail();
  });
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it('accepted: sent, and the server received exactly the bytes kept as the sent copy, to the envelope (Bcc included)', async () => {
    peer = await startSmtpPeer();
    const result = await sendOnce(createSmtpNotifier(smtpConfig(peer.url), { readFile: fs.readFileSync }), mail);
    expect(result).toEqual({ response: expect.stringContaining('250') });
    const [received] = await peer.waitFor(1);
    expect(received.raw.equals(mail.raw)).toBe(true);
    expect(received.envelope).toEqual({
      from: 'relay@example.com',
      to: ['netops@example.com', 'audit@example.com', 'archive@example.com'],
    });
    expect(received.parsed.messageId).toBe(mail.messageId);
    expect(received.parsed.headers.has('bcc')).toBe(false);
  });

  it.each([
    [450, 'transient', 'message', 'SMTP_4XX'],
    [421, 'transient', 'server', 'SMTP_4XX'],
    [550, 'permanent', 'message', 'SMTP_5XX'],
  ] as const)('a %i reply: %s (%s), %s', async (code, kind, scope, failureCode) => {
    peer = await startSmtpPeer({ behaviour: { type: 'reject', code, message: `${code} not now` } });
    const result = await sendOnce(createSmtpNotifier(smtpConfig(peer.url), { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({ failure: { kind, scope, code: failureCode, message: expect.stringContaining(String(code)) } });
  });

  it('connection refused: retry, the whole server', async () => {
    const url = `smtp://127.0.0.1:${REFUSED_PORT}`;
    const result = await sendOnce(createSmtpNotifier(smtpConfig(url), { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({ failure: { kind: 'transient', scope: 'server', configProblem: false } });
    expect('failure' in result && result.failure.message).toContain('ECONNREFUSED');
  });

  it('the connection dropped before the answer: retry, the whole server', async () => {
    peer = await startSmtpPeer({ behaviour: { type: 'drop' } });
    const result = await sendOnce(createSmtpNotifier(smtpConfig(peer.url), { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({ failure: { kind: 'transient', scope: 'server' } });
    expect(peer.received).toHaveLength(0);
  });

  it('a certificate it cannot verify: a configuration problem that holds the queue (retry, whole server), and nothing is sent', async () => {
    const certs = createTestCertificates(makeTempDir('notifier-tls-'));
    peer = await startSmtpPeer({ server: { secure: true, key: certs.key, cert: certs.cert } });
    const result = await sendOnce(createSmtpNotifier(smtpConfig(peer.url), { readFile: fs.readFileSync }), mail);
    // ETLS stays retryable (FAILURE_CATALOGUE): nothing is given up for it, an operator fixes SMTP_CA_FILE.
    expect(result).toMatchObject({ failure: { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' } });
    expect(peer.attempts).toBe(0);
  });

  it('an expired certificate from a CA it trusts: ETLS too, not a network fault (ESOCKET), and nothing is sent', async () => {
    const certs = createTestCertificates(makeTempDir('notifier-expired-'), { expired: true });
    peer = await startSmtpPeer({ server: { secure: true, key: certs.key, cert: certs.cert } });
    const config = smtpConfig(peer.url, { caFile: certs.caFile });
    const result = await sendOnce(createSmtpNotifier(config, { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({ failure: { kind: 'transient', code: 'ETLS', configProblem: true, scope: 'server' } });
    expect('failure' in result && result.failure.message).toContain('certificate has expired');
    expect(peer.attempts).toBe(0);
  });

  it('a refused login over STARTTLS: held for the operator (the whole queue waits), not failed', async () => {
    const certs = createTestCertificates(makeTempDir('notifier-login-'));
    peer = await startSmtpPeer({
      server: {
        disabledCommands: [],
        key: certs.key,
        cert: certs.cert,
        authOptional: false,
        onAuth: (_auth, _session, callback) => callback(Object.assign(new Error('5.7.8 bad credentials'), { responseCode: 535 })),
      },
    });
    const config = smtpConfig(peer.url, { user: 'relay', password: 'wrong', caFile: certs.caFile });
    const result = await sendOnce(createSmtpNotifier(config, { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({
      failure: { kind: 'transient', code: 'EAUTH', configProblem: true, scope: 'server' },
    });
  });

  it('a login to a server that offers no STARTTLS: neither the login nor the mail leaves in clear', async () => {
    const auths: string[] = [];
    peer = await startSmtpPeer({
      server: {
        allowInsecureAuth: true,
        onAuth: (auth, _session, callback) => (auths.push(auth.username ?? ''), callback(null, { user: 'relay' })),
      },
    });
    const config = smtpConfig(peer.url, { user: 'relay', password: 'secret' });
    const result = await sendOnce(createSmtpNotifier(config, { readFile: fs.readFileSync }), mail);
    expect(result).toMatchObject({ failure: { kind: 'transient', code: 'SMTP_TLS_REQUIRED', configProblem: true, scope: 'server' } });
    expect(auths).toEqual([]);
    expect(peer.attempts).toBe(0);
  });
});

describe('the file notifier', () => {
  it('writes the bytes as <Message-ID>.eml and says where', async () => {
    const dir = makeTempDir('notifier-file-');
    const mail = await buildMail();
    const result = await sendOnce(createFileNotifier(dir), mail);
    const file = path.join(dir, 'report-43.d1.notifier_example.com.eml');
    expect(result).toEqual({ response: `written to ${file}`, path: file });
    expect(fs.readFileSync(file).equals(mail.raw)).toBe(true);
  });

  it('a directory it cannot write: retry, not a rejection', async () => {
    const parent = makeTempDir('notifier-file-');
    const blocked = path.join(parent, 'not-a-dir');
    fs.writeFileSync(blocked, '');
    const result = await sendOnce(createFileNotifier(path.join(blocked, 'outbox')), await buildMail());
    expect(result).toMatchObject({ failure: { kind: 'transient' } });
  });
});

import fs from 'node:fs';
import net, { isIP } from 'node:net';
import path from 'node:path';
import type nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer';
import type { SmtpConfig } from '../config';

export interface SendResult {
  messageId: string;
  /** The SMTP server's final answer, or where the .eml file was written. */
  response: string;
  accepted: string[];
  rejected: string[];
  /** Set for the file transport. */
  path?: string;
}

/** Where mails go: an SMTP server, or .eml files when none is configured. */
export interface MailTransport {
  readonly kind: 'smtp' | 'file';
  send(message: SendMailOptions): Promise<SendResult>;
  /** Connects and authenticates (SMTP) or checks the directory is writable (file). */
  verify(): Promise<void>;
  close(): Promise<void>;
}

/** Where the relay's mails go, as configured: SMTP_URL when set, otherwise `.eml` files in the outbox directory. */
export interface TransportSettings {
  smtp?: SmtpConfig;
  mail: { outboxDir: string };
}

/**
 * The relay's transport for `settings`: the SMTP pool when an SMTP server is configured, otherwise
 * the `.eml` file transport. `readFile` reads SMTP_CA_FILE (the core does not touch the disk itself).
 */
export function createTransport(settings: TransportSettings, options: { readFile: (file: string) => Buffer }): MailTransport {
  return settings.smtp ? createSmtpTransport(settings.smtp, options) : createFileTransport(settings.mail.outboxDir);
}

/** nodemailer, loaded when a transport is made: `--help` and `check-config` never send (issue 16). */
function loadNodemailer(): typeof nodemailer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only commands that send load it
  return require('nodemailer') as typeof nodemailer;
}

/**
 * SMTP through a nodemailer pool. `smtp://` upgrades with STARTTLS when the server offers it,
 * `smtps://` is implicit TLS; certificates are verified unless explicitly turned off.
 */
export function createSmtpTransport(config: SmtpConfig, options: { readFile: (file: string) => Buffer }): MailTransport {
  const url = new URL(config.url);
  const secure = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const transporter = loadNodemailer().createTransport({
    getSocket: connectWithoutDelay(host, port),
    pool: true,
    maxConnections: config.poolSize,
    host,
    port,
    secure,
    auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
    tls: {
      rejectUnauthorized: config.tlsRejectUnauthorized,
      ca: config.caFile ? options.readFile(config.caFile) : undefined,
      // SNI carries host names only (RFC 6066 §3); for an IP address the certificate's IP SAN is checked.
      servername: isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
    },
    connectionTimeout: config.connectionTimeoutMs,
    greetingTimeout: config.greetingTimeoutMs,
    socketTimeout: config.socketTimeoutMs,
    // nodemailer's own logger would print envelopes; the relay logs what matters itself.
    logger: false,
    debug: false,
  });
  return {
    kind: 'smtp',
    async send(message) {
      const info = await transporter.sendMail(message);
      return {
        messageId: info.messageId,
        response: info.response,
        accepted: (info.accepted ?? []).map(String),
        rejected: (info.rejected ?? []).map(String),
      };
    },
    async verify() {
      await transporter.verify();
    },
    close() {
      transporter.close();
      return Promise.resolve();
    },
  };
}

/**
 * TCP_NODELAY on every SMTP connection. nodemailer leaves Nagle's algorithm on, and an SMTP exchange
 * is a write followed by a wait for the reply: the message's final "\r\n.\r\n" is a small write
 * that Nagle holds until the server acknowledges the body, which the server delays by up to 40 ms
 * (Linux's delayed ACK). On a pooled connection that is 40 ms added to every mail after the first
 * (bench/end-to-end: webhook → accepted p50 56 ms before, and nodemailer alone 108 mails/s).
 * nodemailer's documented `getSocket` hook (meant for proxies) hands it a socket of ours.
 *
 * The TCP connection is handed over while it connects: nodemailer's handlers are on it before it can
 * fail, so a refusal or a reset fails the send as before (and the pool drops the connection), and
 * its greeting timeout bounds a connection that never completes. nodemailer's pool takes the socket
 * as `connection` and speaks SMTP on it: STARTTLS for smtp://, TLS from the start for smtps://
 * (tls.connect accepts a socket that connects later), with the same certificate checks.
 */
function connectWithoutDelay(host: string, port: number) {
  return (_options: unknown, callback: (error: Error | null, socketOptions?: { connection: net.Socket }) => void): void => {
    callback(null, { connection: net.connect({ host, port, noDelay: true }) });
  };
}

/**
 * Writes each mail as `<dir>/<name>.eml` (RFC 5322 bytes, as an SMTP server would receive them).
 * The name comes from the Message-ID, so a retried send overwrites rather than duplicates, and the
 * file appears whole (written aside, then renamed).
 */
export function createFileTransport(dir: string): MailTransport {
  const transporter = loadNodemailer().createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'file',
    async send(message) {
      const info = await transporter.sendMail(message);
      await fs.promises.mkdir(dir, { recursive: true });
      const name = `${String(message.messageId ?? info.messageId)
        .replace(/^<|>$/g, '')
        .replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
      const file = path.join(dir, name);
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.promises.writeFile(tmp, info.message as Buffer);
      await fs.promises.rename(tmp, file);
      const envelope = info.envelope as { to?: string[] };
      return { messageId: info.messageId, response: `written to ${file}`, accepted: envelope.to ?? [], rejected: [], path: file };
    },
    async verify() {
      await fs.promises.mkdir(dir, { recursive: true });
      await fs.promises.access(dir, fs.constants.W_OK);
    },
    async close() {},
  };
}

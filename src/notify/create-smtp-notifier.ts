import net, { isIP } from 'node:net';
import type nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { createSecretMask, systemClock, type SecretMask } from '../shared';
import type * as AccessTokenModule from './fetch-access-token';
import type * as TokenCacheModule from './create-token-cache';
import type { TokenCache } from './create-token-cache';
import type { OAuth2Config } from './oauth2-settings';
import { buildFailedResult, type Notifier, type NotifierIo } from './notifier';
import { verifySmtpSteps } from './verify-smtp-steps';

/** SMTP_URL (and MAIL_TRANSPORT=smtp): pooled SMTP, with a password, an XOAUTH2 token, or no login. */
export interface SmtpConfig {
  url: string;
  user?: string;
  password?: string;
  caFile?: string;
  poolSize: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  oauth2?: OAuth2Config;
}

/** nodemailer, loaded when a notifier is made: `--help` and `check-config` never send. */
function loadNodemailer(): typeof nodemailer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only commands that send load it
  return require('nodemailer') as typeof nodemailer;
}

/**
 * SMTP through a nodemailer pool. `smtp://` upgrades with STARTTLS when the server offers it,
 * `smtps://` is implicit TLS; certificates are always verified (SMTP_CA_FILE adds a private CA). With
 * OAuth2 (the app's credentials are set) nodemailer logs in with AUTH XOAUTH2 and asks the relay's token cache for the
 * token through its provision hook (`oauth2_provision_cb`), so every pooled connection shares one
 * token and one request for it; a token the server refuses is renewed once by nodemailer.
 */
export function createSmtpNotifier(config: SmtpConfig, io: NotifierIo): Notifier {
  const options = buildSmtpOptions(config, io.readFile);
  const transporter = loadNodemailer().createTransport({ ...options, pool: true, maxConnections: config.poolSize });
  const tokens = config.oauth2 ? createSmtpTokenCache(config, io) : undefined;
  if (tokens) {
    // Each pooled connection asks once, at its login; expiry 0: nodemailer keeps no expiry of its own.
    transporter.set(
      'oauth2_provision_cb',
      (_user: string, renew: boolean, callback: (error: Error | null, token?: string, expires?: number) => void) => {
        tokens.get({ renew }).then(
          (token) => callback(null, token.accessToken, 0),
          (error: Error) => callback(error),
        );
      },
    );
  }
  const oauth2 = config.oauth2 !== undefined;
  // An SMTP server may echo the login (535 with the password, or AUTH PLAIN's base64), a token
  // endpoint the client secret: hidden before any reply becomes an error text, a log line or a row.
  const mask = createSecretMask([config.password, config.oauth2?.clientSecret]);
  return {
    kind: 'smtp',
    async send(mail) {
      try {
        // The bytes as built, to the envelope as built: nodemailer composes nothing more.
        const info = await transporter.sendMail({ raw: mail.raw, envelope: mail.envelope });
        return { status: 'sent', response: mask(info.response) };
      } catch (error) {
        return buildFailedResult(maskReply(withOAuth2Code(error, oauth2), mask));
      }
    },
    async verify(onStep) {
      try {
        if (onStep) await verifySmtpSteps({ options, user: config.user, password: config.password, tokens, onStep });
        else await transporter.verify();
      } catch (error) {
        throw maskReply(withOAuth2Code(error, oauth2), mask);
      }
    },
    close() {
      transporter.close();
      return Promise.resolve();
    },
  };
}

/** The pool's connection settings (host, TLS, timeouts, login), shared with the step-by-step check. */
function buildSmtpOptions(config: SmtpConfig, readFile: (file: string) => Buffer): Omit<SMTPPool.Options, 'pool'> {
  const url = new URL(config.url);
  const secure = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  return {
    getSocket: connectWithoutDelay(host, port),
    host,
    port,
    secure,
    auth: config.oauth2
      ? { type: 'OAuth2', user: config.user }
      : config.user
        ? { user: config.user, pass: config.password ?? '' }
        : undefined,
    tls: {
      rejectUnauthorized: true,
      ca: config.caFile ? readFile(config.caFile) : undefined,
      // SNI carries host names only (RFC 6066 §3); for an IP address the certificate's IP SAN is checked.
      servername: isIP(host) ? undefined : url.hostname,
    },
    connectionTimeout: config.connectionTimeoutMs,
    greetingTimeout: config.greetingTimeoutMs,
    socketTimeout: config.socketTimeoutMs,
    // nodemailer's own logger would print envelopes; the relay logs what matters itself.
    logger: false,
    debug: false,
  };
}

/** The OAuth2 token cache, whose code only a relay with an XOAUTH2 login loads. */
function createSmtpTokenCache(config: SmtpConfig, io: NotifierIo): TokenCache {
  /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose: only with an XOAUTH2 login */
  const { createTokenCache } = require('./create-token-cache') as typeof TokenCacheModule;
  const { createAccessTokenFetcher } = require('./fetch-access-token') as typeof AccessTokenModule;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const clock = io.clock ?? systemClock;
  return createTokenCache({ fetchToken: createAccessTokenFetcher(config.oauth2!, { clock, fetch: io.fetch }), clock });
}

/** The error with the server's words (its message and its `response`, the SMTP reply) masked. */
function maskReply(error: unknown, mask: SecretMask): unknown {
  if (!error || typeof error !== 'object') return error;
  const err = error as { message?: unknown; response?: unknown };
  if (typeof err.message === 'string') err.message = mask(err.message);
  if (typeof err.response === 'string') err.response = mask(err.response);
  return error;
}

/**
 * An OAuth2 login failure with the code that says what happened: the token request's own code
 * (nodemailer reports it as EAUTH), or OAUTH2_REFUSED when the server refused the token even after
 * nodemailer renewed it (535). With a password nothing changes: EAUTH stays EAUTH.
 */
function withOAuth2Code(error: unknown, oauth2: boolean): unknown {
  if (!oauth2 || !error || typeof error !== 'object') return error;
  const err = error as { code?: unknown; oauth2Code?: unknown };
  if (typeof err.oauth2Code === 'string') err.code = err.oauth2Code;
  else if (err.code === 'EAUTH') err.code = 'OAUTH2_REFUSED';
  return error;
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

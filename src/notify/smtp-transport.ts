import net, { isIP } from 'node:net';
import type nodemailer from 'nodemailer';
import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type XOAuth2 from 'nodemailer/lib/xoauth2';
import { z } from 'zod';
import { bool, createSecretMask, positiveInt, setting, type SecretMask } from '../shared';
import type * as AccessTokenModule from './fetch-access-token';
import type { TokenCache } from './fetch-access-token';
import type { NotifierIo, SectionEnv, Sender, TransportContext, TransportDescriptor } from './notifier';
import {
  buildOAuth2Config,
  checkUnusedOAuth2,
  OAUTH2_SETTINGS,
  oauth2Secrets,
  wantsOAuth2Login,
  type OAuth2Config,
} from './oauth2-settings';
import { OAUTH2_FAILURES } from './oauth2-settings';
import { readSmtpError, SMTP_FAILURES } from './smtp-failures';

/** SMTP_URL (and MAIL_TRANSPORT=smtp): pooled SMTP, with a password, an XOAUTH2 token, or no login. */
export interface SmtpConfig {
  url: string;
  user?: string;
  password?: string;
  caFile?: string;
  /** A login (password or XOAUTH2) goes only over TLS: `smtp://` must upgrade with STARTTLS (SMTP_REQUIRE_TLS). */
  requireTls: boolean;
  poolSize: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  oauth2?: OAuth2Config;
}

/** Time to open an SMTP connection: a reachable server answers in well under a second, a dropped packet never. */
export const SMTP_CONNECTION_TIMEOUT_MS = 10_000;

/** Time for the SMTP server's greeting: busy servers delay it a few seconds (tarpitting), never this long. */
export const SMTP_GREETING_TIMEOUT_MS = 10_000;

/** Silence allowed on an SMTP connection: a server may take a while to accept a large message's data. */
export const SMTP_SOCKET_TIMEOUT_MS = 60_000;

const SMTP_SETTINGS = {
  SMTP_URL: setting(z.string().trim().optional(), {
    group: 'basics',
    description: 'smtp://host:587 (STARTTLS when offered) or smtps://host:465; unset: mails are .eml files in DATA_DIR/mail.',
    example: 'smtp://mail.example.com:587',
  }),
  SMTP_USER: setting(z.string().optional(), { group: 'basics', description: 'SMTP login, if not in SMTP_URL.' }),
  SMTP_PASSWORD: setting(z.string().optional(), { secret: true, group: 'basics', description: 'SMTP password, if not in SMTP_URL.' }),
  SMTP_CA_FILE: setting(z.string().trim().optional(), {
    group: 'features',
    description: "PEM file with the CA that signed the SMTP server's certificate (private CA or self-signed).",
  }),
  SMTP_REQUIRE_TLS: setting(bool(true), {
    group: 'features',
    description:
      'With a login (SMTP_USER, or OAuth2) an smtp:// server must offer STARTTLS, else nothing is sent and the queue is held. ' +
      'false: log in and send in clear when it offers none (only on a path you trust). Without a login STARTTLS is used when offered.',
  }),
  SMTP_POOL_SIZE: setting(positiveInt(5, 100), {
    group: 'features',
    description: 'Pooled SMTP connections, and so sends in flight at once.',
  }),
};

/** What the SMTP transport reads: its section, OAuth2's (for an XOAUTH2 login) and MAIL_TRANSPORT. */
type SmtpEnv = SectionEnv<typeof SMTP_SETTINGS & typeof OAUTH2_SETTINGS> & { MAIL_TRANSPORT: string };

/** The SMTP pool, when SMTP_URL is set (and MAIL_TRANSPORT is smtp). */
export const smtpTransport: TransportDescriptor<'smtp', SmtpConfig, typeof SMTP_SETTINGS> = {
  name: 'smtp',
  settings: SMTP_SETTINGS,
  choice: 'SMTP_URL (or .eml files), logging in with AUTH XOAUTH2 when OAUTH2_CLIENT_ID or OAUTH2_SERVICE_ACCOUNT_FILE is set',
  configure: (env, context) => configureSmtp(env as SmtpEnv, context),
  create: createSmtpSender,
  describeStart: (smtp) => `SMTP ${new URL(smtp.url).host}`,
  describeVerified(smtp) {
    const login = smtp.oauth2 ? ' and the XOAUTH2 login' : smtp.user ? ' and the login' : '';
    return `SMTP server ${new URL(smtp.url).host} accepted the connection${login}.`;
  },
  concurrency: (smtp) => smtp.poolSize,
  secrets: (smtp) => [...(smtp.password ? [smtp.password] : []), ...oauth2Secrets(smtp.oauth2)],
  failures: { ...SMTP_FAILURES, ...OAUTH2_FAILURES },
};

/** SMTP settings, or undefined when mails go to .eml files (or Graph); problems are pushed onto `issues`. */
function configureSmtp(e: SmtpEnv, context: TransportContext): SmtpConfig | undefined {
  const { broken, issues } = context;
  const oauth2InUse = (wantsOAuth2Login(e) && e.SMTP_URL !== undefined) || e.MAIL_TRANSPORT === 'graph';
  if (!oauth2InUse && !broken.has('MAIL_TRANSPORT')) issues.push(...checkUnusedOAuth2(e));
  if (e.SMTP_URL === undefined || e.MAIL_TRANSPORT !== 'smtp') {
    if (e.SMTP_URL !== undefined)
      issues.push({
        variable: 'SMTP_URL',
        message: `has no effect with MAIL_TRANSPORT=${e.MAIL_TRANSPORT} (mail does not go through SMTP): unset one of them`,
      });
    for (const v of ['SMTP_USER', 'SMTP_PASSWORD', 'SMTP_CA_FILE'] as const) {
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without SMTP_URL' });
    }
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(e.SMTP_URL);
  } catch {
    issues.push({ variable: 'SMTP_URL', message: 'is not a URL (example: smtp://mail.example.com:587)' });
  }
  if (url && url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    issues.push({ variable: 'SMTP_URL', message: 'must start with smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)' });
  }
  if (url && (url.username || url.password) && (e.SMTP_USER !== undefined || e.SMTP_PASSWORD !== undefined)) {
    issues.push({ variable: 'SMTP_USER', message: 'credentials are already in SMTP_URL; give them in one place only' });
  }
  if (e.SMTP_PASSWORD !== undefined && e.SMTP_USER === undefined && !url?.username && !broken.has('SMTP_USER')) {
    issues.push({ variable: 'SMTP_PASSWORD', message: 'is set but SMTP_USER is not' });
  }
  context.requireRecipients('SMTP_URL is set');
  if (e.SMTP_CA_FILE !== undefined) checkReadable('SMTP_CA_FILE', e.SMTP_CA_FILE, context);
  const user = e.SMTP_USER ?? (url?.username ? decodeURIComponent(url.username) : undefined);
  const password = e.SMTP_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined);
  return {
    url: e.SMTP_URL,
    user,
    password,
    caFile: e.SMTP_CA_FILE,
    requireTls: e.SMTP_REQUIRE_TLS,
    poolSize: e.SMTP_POOL_SIZE,
    connectionTimeoutMs: SMTP_CONNECTION_TIMEOUT_MS,
    greetingTimeoutMs: SMTP_GREETING_TIMEOUT_MS,
    socketTimeoutMs: SMTP_SOCKET_TIMEOUT_MS,
    oauth2: wantsOAuth2Login(e) ? configureSmtpOAuth2(e, { user, password }, context) : undefined,
  };
}

/** A file read when the relay starts, said now by its variable if it cannot be read (else serve stops on a bare ENOENT). */
function checkReadable(variable: string, file: string, context: TransportContext): void {
  try {
    context.readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    context.issues.push({ variable, message: `cannot read ${file} (${code}): accepts a readable PEM file` });
  }
}

/** The app's OAuth2 credentials are given: the mailbox is required, a password refused (the login is a token). */
function configureSmtpOAuth2(e: SmtpEnv, login: { user?: string; password?: string }, context: TransportContext): OAuth2Config | undefined {
  const { issues } = context;
  const why = 'with an XOAUTH2 login (OAUTH2_CLIENT_ID or OAUTH2_SERVICE_ACCOUNT_FILE is set)';
  if (login.password !== undefined)
    issues.push({ variable: 'SMTP_PASSWORD', message: `has no effect ${why}: the login is an access token; remove it` });
  if (login.user === undefined)
    issues.push({
      variable: 'SMTP_USER',
      message: `is required ${why}: the mailbox to log in as (with Google, the one the service account acts as)`,
    });
  return buildOAuth2Config(e, { kind: 'smtp', user: login.user }, context);
}

/**
 * SMTP through a nodemailer pool. `smtp://` upgrades with STARTTLS when the server offers it, `smtps://` is
 * implicit TLS; certificates are always verified (SMTP_CA_FILE adds a private CA). With OAuth2 nodemailer logs
 * in with AUTH XOAUTH2, taking the token from the relay's cache (its `oauth2_provision_cb` hook), so every pooled
 * connection shares one token and one request for it; a token the server refuses is renewed once by nodemailer.
 */
export function createSmtpSender(config: SmtpConfig, io: NotifierIo): Sender {
  const options = buildSmtpOptions(config, io.readFile);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: `--help` and `check-config` never send
  const { createTransport } = require('nodemailer') as typeof nodemailer;
  const transporter = createTransport({ ...options, pool: true, maxConnections: config.poolSize });
  const tokens = config.oauth2 ? createSmtpTokenCache(config.oauth2, io) : undefined;
  if (tokens) transporter.set('oauth2_provision_cb', provideToken(tokens));
  // An SMTP server may echo the login (535 with the password, or AUTH PLAIN's base64), a token
  // endpoint the client secret: hidden before any reply becomes an error text, a log line or a row.
  const mask = createSecretMask([config.password, config.oauth2?.clientSecret]);
  const reword = (error: unknown) => readSmtpError(rewordError(error, mask, config.oauth2 !== undefined, options.requireTLS === true));
  return {
    async send(mail) {
      try {
        // The bytes as built, to the envelope as built: nodemailer composes nothing more.
        const info = await transporter.sendMail({ raw: mail.raw, envelope: mail.envelope });
        return { response: mask(info.response) };
      } catch (error) {
        throw reword(error);
      }
    },
    async verify(onStep) {
      try {
        if (onStep) await verifySmtpSteps(options, config, tokens, onStep);
        else await transporter.verify();
      } catch (error) {
        throw reword(error);
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
  const logsIn = config.oauth2 !== undefined || config.user !== undefined;
  return {
    getSocket: connectWithoutDelay(host, port),
    host,
    port,
    secure,
    // With a login, no STARTTLS means no AUTH and no DATA: nodemailer stops before either (RFC 3207 §4.1 leaves it to the client).
    requireTLS: !secure && logsIn && config.requireTls,
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
function createSmtpTokenCache(oauth2: OAuth2Config, io: NotifierIo): TokenCache {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only with an XOAUTH2 login
  const { createOAuth2TokenCache } = require('./fetch-access-token') as typeof AccessTokenModule;
  return createOAuth2TokenCache(oauth2, io);
}

/**
 * nodemailer's token hook (the pool's `oauth2_provision_cb`, XOAuth2's `provisionCallback`), answered
 * from the relay's cache. Expiry 0: nodemailer keeps no expiry of its own; the cache decides when a token is renewed.
 */
function provideToken(tokens: TokenCache) {
  return (_user: string, renew: boolean, callback: (error: Error | null, token: string, expires: number) => void): void => {
    tokens.get({ renew }).then(
      (token) => callback(null, token.accessToken, 0),
      (error: Error) => callback(error, '', 0),
    );
  };
}

/**
 * The error with the server's words (its message and its `response`, the SMTP reply) masked. With OAuth2 its
 * code says what happened: the token request's own (nodemailer reports it as EAUTH), or OAUTH2_REFUSED when the
 * server refused the token even after nodemailer renewed it (535). With a password EAUTH stays EAUTH. With TLS
 * required, a server that answered STARTTLS with an error (it offers none, or a path stripped it) is
 * SMTP_TLS_REQUIRED, told apart from a failed handshake (ETLS without a reply).
 */
function rewordError(error: unknown, mask: SecretMask, oauth2: boolean, requireTls: boolean): unknown {
  if (!error || typeof error !== 'object') return error;
  const err = error as { code?: unknown; oauth2Code?: unknown; message?: unknown; response?: unknown; command?: unknown };
  if (oauth2 && typeof err.oauth2Code === 'string') err.code = err.oauth2Code;
  else if (oauth2 && err.code === 'EAUTH') err.code = 'OAUTH2_REFUSED';
  else if (requireTls && err.code === 'ETLS' && err.command === 'STARTTLS' && typeof err.response === 'string')
    err.code = 'SMTP_TLS_REQUIRED';
  if (typeof err.message === 'string') err.message = mask(err.message);
  if (typeof err.response === 'string') err.response = mask(err.response);
  return error;
}

/**
 * TCP_NODELAY on every SMTP connection: nodemailer leaves Nagle's algorithm on, which holds the message's
 * final "\r\n.\r\n" until the server acknowledges the body, and the server delays that by up to 40 ms
 * (Linux's delayed ACK), on every mail after the first of a pooled connection. nodemailer's documented
 * `getSocket` hook hands it our socket while it connects, so its handlers, greeting timeout, TLS and
 * certificate checks apply as to its own.
 */
function connectWithoutDelay(host: string, port: number) {
  return (_options: unknown, callback: (error: Error | null, socketOptions?: { connection: net.Socket }) => void): void => {
    callback(null, { connection: net.connect({ host, port, noDelay: true }) });
  };
}

/**
 * The SMTP check one step at a time, for `verify-smtp`: the token (OAuth2), the connection, TLS and the
 * login, each reported as it passes, so that a failure shows which step failed. It uses nodemailer's
 * own SMTPConnection (the class its pool uses), with the pool's settings, and sends nothing.
 */
async function verifySmtpSteps(
  options: Omit<SMTPPool.Options, 'pool'>,
  config: SmtpConfig,
  tokens: TokenCache | undefined,
  onStep: (step: string) => void,
): Promise<void> {
  if (tokens) {
    const token = await tokens.get();
    onStep(`token fetched (expires ${new Date(token.expiresAt).toISOString()})`);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like the rest of nodemailer (only commands that send load it)
  const Connection = require('nodemailer/lib/smtp-connection') as typeof SMTPConnection;
  const { getSocket: _pooled, ...connectionOptions } = options;
  const connection = new Connection(connectionOptions);
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once('error', reject);
      connection.connect(() => resolve());
    });
    onStep(`connected to ${options.host}:${options.port}`);
    if (!connection.secure)
      onStep('TLS: none (the server offered no STARTTLS; mails, and a login with SMTP_REQUIRE_TLS=false, travel in clear)');
    else onStep(`TLS: ${options.secure ? 'implicit (smtps://)' : 'STARTTLS'}, certificate verified`);
    await login(connection, config, tokens, onStep);
  } finally {
    connection.close();
  }
}

async function login(connection: SMTPConnection, config: SmtpConfig, tokens: TokenCache | undefined, onStep: (step: string) => void) {
  const { user = '', password = '' } = config;
  if (!tokens && !config.user) {
    onStep('no login configured (SMTP_USER is not set)');
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like the rest of nodemailer
  const XOAuth2Class = require('nodemailer/lib/xoauth2') as typeof XOAuth2;
  const auth = tokens
    ? { oauth2: new XOAuth2Class({ user, provisionCallback: provideToken(tokens) }) }
    : { credentials: { user, pass: password } };
  await new Promise<void>((resolve, reject) => {
    connection.login(auth as SMTPConnection.AuthenticationOAuth2 | SMTPConnection.AuthenticationCredentials, (error) =>
      error ? reject(error) : resolve(),
    );
  });
  onStep(tokens ? `AUTH XOAUTH2 accepted for ${config.user}` : `login accepted for ${config.user}`);
}

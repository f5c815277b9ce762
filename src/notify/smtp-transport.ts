import net, { isIP } from 'node:net';
import { promisify } from 'node:util';
import type nodemailer from 'nodemailer';
import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type XOAuth2 from 'nodemailer/lib/xoauth2';
import { z } from 'zod';
import { bool, createSecretMask, positiveInt, setting } from '../shared';
import type * as AccessTokenModule from './fetch-access-token';
import type { TokenCache } from './fetch-access-token';
import type { NotifierIo, SectionEnv, Sender, TransportContext, TransportDescriptor } from './notifier';
import { buildOAuth2Config, OAUTH2_FAILURES, OAUTH2_SETTINGS, oauth2Secrets } from './oauth2-settings';
import { readSmtpError, SMTP_FAILURES } from './smtp-failures';

/** SMTP_URL (and MAIL_TRANSPORT=smtp): pooled SMTP, with a password, an XOAUTH2 token, or no login. */
export type SmtpConfig = NonNullable<ReturnType<typeof configureSmtp>>;

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

type SmtpEnv = SectionEnv<typeof SMTP_SETTINGS & typeof OAUTH2_SETTINGS> & { MAIL_TRANSPORT: string };

/** The SMTP pool, when SMTP_URL is set (and MAIL_TRANSPORT is smtp). */
export const smtpTransport: TransportDescriptor<'smtp', SmtpConfig, typeof SMTP_SETTINGS> = {
  name: 'smtp',
  settings: SMTP_SETTINGS,
  choice: 'SMTP_URL (or .eml files), logging in with AUTH XOAUTH2 when OAUTH2_CLIENT_ID or OAUTH2_SERVICE_ACCOUNT_FILE is set',
  configure: (env, context) => configureSmtp(env as SmtpEnv, context),
  create: createSmtpSender,
  describeStart: (smtp) => `SMTP ${new URL(smtp.url).host}`,
  describeStartWarnings: (smtp) =>
    smtp.requireTls
      ? []
      : [
          {
            fields: { variable: 'SMTP_REQUIRE_TLS' },
            message:
              'SMTP_REQUIRE_TLS=false: a login to a server that offers no STARTTLS sends the password and the mails in clear; keep it only on a path you trust',
          },
        ],
  describeVerified(smtp) {
    const login = smtp.oauth2 ? ' and the XOAUTH2 login' : smtp.user ? ' and the login' : '';
    return `SMTP server ${new URL(smtp.url).host} accepted the connection${login}.`;
  },
  describeServer: (smtp) => new URL(smtp.url).host,
  describeConfig: (smtp) => ({ smtp }),
  settingsInForce: (smtp) => [...Object.keys(SMTP_SETTINGS), ...(smtp.oauth2 ? Object.keys(OAUTH2_SETTINGS) : [])],
  concurrency: (smtp) => smtp.poolSize,
  secrets: (smtp) => [smtp.password ?? [], oauth2Secrets(smtp.oauth2)].flat(),
  failures: { ...SMTP_FAILURES, ...OAUTH2_FAILURES },
};

/** Undefined when mails go to .eml files (or Graph); problems are pushed onto `issues`. */
function configureSmtp(e: SmtpEnv, context: TransportContext) {
  const { broken, issues } = context;
  const xoauth2 = e.OAUTH2_CLIENT_ID !== undefined || e.OAUTH2_SERVICE_ACCOUNT_FILE !== undefined;
  const oauth2InUse = (xoauth2 && e.SMTP_URL !== undefined) || e.MAIL_TRANSPORT === 'graph';
  if (!oauth2InUse && !broken.has('MAIL_TRANSPORT')) {
    const message =
      'has no effect unless SMTP_URL is set with OAUTH2_CLIENT_ID (Microsoft) or OAUTH2_SERVICE_ACCOUNT_FILE (Google), or MAIL_TRANSPORT=graph';
    for (const variable of Object.keys(OAUTH2_SETTINGS) as (keyof typeof OAUTH2_SETTINGS)[])
      if (e[variable] !== undefined) issues.push({ variable, message });
  }
  if (e.SMTP_URL === undefined || e.MAIL_TRANSPORT !== 'smtp') {
    if (e.SMTP_URL !== undefined)
      issues.push({
        variable: 'SMTP_URL',
        message: `has no effect with MAIL_TRANSPORT=${e.MAIL_TRANSPORT} (mail does not go through SMTP): unset one of them`,
      });
    for (const v of ['SMTP_USER', 'SMTP_PASSWORD', 'SMTP_CA_FILE'] as const)
      if (e[v] !== undefined) issues.push({ variable: v, message: 'has no effect without SMTP_URL' });
    return undefined;
  }
  const url = URL.canParse(e.SMTP_URL) ? new URL(e.SMTP_URL) : undefined;
  if (!url) issues.push({ variable: 'SMTP_URL', message: 'is not a URL (example: smtp://mail.example.com:587)' });
  if (url && url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    issues.push({ variable: 'SMTP_URL', message: 'must start with smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)' });
  if (url && (url.username || url.password) && (e.SMTP_USER !== undefined || e.SMTP_PASSWORD !== undefined))
    issues.push({ variable: 'SMTP_USER', message: 'credentials are already in SMTP_URL; give them in one place only' });
  if (e.SMTP_PASSWORD !== undefined && e.SMTP_USER === undefined && !url?.username && !broken.has('SMTP_USER'))
    issues.push({ variable: 'SMTP_PASSWORD', message: 'is set but SMTP_USER is not' });
  context.requireRecipients('SMTP_URL is set');
  // Said now by its variable, else serve stops on a bare ENOENT.
  try {
    if (e.SMTP_CA_FILE !== undefined) context.readFile(e.SMTP_CA_FILE);
  } catch (error) {
    const message = `cannot read ${e.SMTP_CA_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'}): accepts a readable PEM file`;
    issues.push({ variable: 'SMTP_CA_FILE', message });
  }
  const user = e.SMTP_USER ?? (url?.username ? decodeURIComponent(url.username) : undefined);
  const password = e.SMTP_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined);
  if (xoauth2) {
    const why = 'with an XOAUTH2 login (OAUTH2_CLIENT_ID or OAUTH2_SERVICE_ACCOUNT_FILE is set)';
    if (password !== undefined)
      issues.push({ variable: 'SMTP_PASSWORD', message: `has no effect ${why}: the login is an access token; remove it` });
    if (user === undefined)
      issues.push({
        variable: 'SMTP_USER',
        message: `is required ${why}: the mailbox to log in as (with Google, the one the service account acts as)`,
      });
  }
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
    oauth2: xoauth2 ? buildOAuth2Config(e, { kind: 'smtp', user }, context) : undefined,
  };
}

/** A nodemailer pool, certificates always verified; with XOAUTH2 every pooled connection shares the relay's cached token. */
export function createSmtpSender(config: SmtpConfig, io: NotifierIo): Sender {
  const options = buildSmtpOptions(config, io.readFile);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: `--help` and `check-config` never send
  const { createTransport } = require('nodemailer') as typeof nodemailer;
  const transporter = createTransport({ ...options, pool: true, maxConnections: config.poolSize });
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only with an XOAUTH2 login
  const tokens = config.oauth2 && (require('./fetch-access-token') as typeof AccessTokenModule).createOAuth2TokenCache(config.oauth2, io);
  if (tokens) transporter.set('oauth2_provision_cb', provideToken(tokens));
  // A server may echo the login (535 with the password, AUTH PLAIN's base64): masked before it is kept or logged.
  const mask = createSecretMask(smtpTransport.secrets(config));
  const reading = { mask, oauth2: tokens !== undefined, requireTls: options.requireTLS === true };
  return {
    async send(mail) {
      try {
        // The bytes as built, to the envelope as built: nodemailer composes nothing more.
        const info = await transporter.sendMail({ raw: mail.raw, envelope: mail.envelope });
        return { response: mask(info.response) };
      } catch (error) {
        throw readSmtpError(error, reading);
      }
    },
    // With `onStep` (verify-smtp): step by step with the pool's own settings; nothing is sent.
    async verify(onStep) {
      const fail = (error: unknown): never => {
        throw readSmtpError(error, reading);
      };
      if (!onStep) {
        await transporter.verify().catch(fail);
        return;
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like the rest of nodemailer (only commands that send load it)
      const Connection = require('nodemailer/lib/smtp-connection') as typeof SMTPConnection;
      const { getSocket: _pooled, ...connectionOptions } = options;
      const connection = new Connection(connectionOptions);
      try {
        if (tokens) onStep(`token fetched (expires ${new Date((await tokens.get()).expiresAt).toISOString()})`);
        await new Promise<void>((resolve, reject) => {
          connection.once('error', reject);
          connection.connect(() => resolve());
        });
        onStep(`connected to ${options.host}:${options.port}`);
        if (!connection.secure)
          onStep('TLS: none (the server offered no STARTTLS; mails, and a login with SMTP_REQUIRE_TLS=false, travel in clear)');
        else onStep(`TLS: ${options.secure ? 'implicit (smtps://)' : 'STARTTLS'}, certificate verified`);
        const { user = '', password = '' } = config;
        if (!tokens && !config.user) return onStep('no login configured (SMTP_USER is not set)');
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like the rest of nodemailer
        const XOAuth2Class = require('nodemailer/lib/xoauth2') as typeof XOAuth2;
        const auth = tokens
          ? { oauth2: new XOAuth2Class({ user, provisionCallback: provideToken(tokens) }) }
          : { credentials: { user, pass: password } };
        await promisify(connection.login.bind(connection))(
          auth as SMTPConnection.AuthenticationOAuth2 | SMTPConnection.AuthenticationCredentials,
        );
        onStep(tokens ? `AUTH XOAUTH2 accepted for ${user}` : `login accepted for ${user}`);
      } catch (error) {
        fail(error);
      } finally {
        connection.close();
      }
    },
    async close() {
      transporter.close();
    },
  };
}

function buildSmtpOptions(config: SmtpConfig, readFile: (file: string) => Buffer): Omit<SMTPPool.Options, 'pool'> {
  const url = new URL(config.url);
  const secure = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  return {
    // TCP_NODELAY: with Nagle on, the final "\r\n.\r\n" waits up to 40 ms for the server's delayed ACK per pooled mail;
    // nodemailer applies all its checks to a socket from `getSocket`.
    getSocket: (_options, callback) => callback(null, { connection: net.connect({ host, port, noDelay: true }) }),
    host,
    port,
    secure,
    // With a login, no STARTTLS means no AUTH and no DATA (RFC 3207 §4.1 leaves it to the client).
    requireTLS: !secure && (config.oauth2 !== undefined || config.user !== undefined) && config.requireTls,
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
    logger: false, // it would print envelopes
    debug: false,
  };
}

/** nodemailer's token hook, from the relay's cache; expiry 0: the cache decides when to renew. */
function provideToken(tokens: TokenCache) {
  return (_user: string, renew: boolean, callback: (error: Error | null, token: string, expires: number) => void): void => {
    tokens.get({ renew }).then(
      (token) => callback(null, token.accessToken, 0),
      (error: Error) => callback(error, '', 0),
    );
  };
}

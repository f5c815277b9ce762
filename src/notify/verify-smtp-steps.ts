import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type XOAuth2 from 'nodemailer/lib/xoauth2';
import type { TokenCache } from './create-token-cache';

export interface VerifySmtpInput {
  /** The pool's settings: the same host, TLS and timeouts as real sends. */
  options: Omit<SMTPPool.Options, 'pool'>;
  user?: string;
  password?: string;
  /** Set with OAuth2 credentials: the login is AUTH XOAUTH2 with this cache's token. */
  tokens?: TokenCache;
  onStep: (step: string) => void;
}

/**
 * The SMTP check one step at a time, for `verify-smtp`: the token (OAuth2), the connection, TLS and the
 * login, each reported as it passes, so that a failure shows which step failed. It uses nodemailer's
 * own SMTPConnection (the class its pool uses) and sends nothing.
 */
export async function verifySmtpSteps(input: VerifySmtpInput): Promise<void> {
  const { options, onStep } = input;
  if (input.tokens) {
    const token = await input.tokens.get();
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
    onStep(describeTls(connection, options));
    await login(connection, input);
  } finally {
    connection.close();
  }
}

function describeTls(connection: SMTPConnection, options: VerifySmtpInput['options']): string {
  if (!connection.secure) return 'TLS: none (the server offered no STARTTLS; the login and mails travel in clear)';
  return `TLS: ${options.secure ? 'implicit (smtps://)' : 'STARTTLS'}, certificate verified`;
}

async function login(connection: SMTPConnection, input: VerifySmtpInput): Promise<void> {
  const { tokens, user, onStep } = input;
  if (!tokens && !user) {
    onStep('no login configured (SMTP_USER is not set)');
    return;
  }
  const auth = tokens ? { oauth2: createXOAuth2(user ?? '', tokens) } : { credentials: { user: user ?? '', pass: input.password ?? '' } };
  await new Promise<void>((resolve, reject) => {
    connection.login(auth as SMTPConnection.AuthenticationOAuth2 | SMTPConnection.AuthenticationCredentials, (error) =>
      error ? reject(error) : resolve(),
    );
  });
  onStep(tokens ? `AUTH XOAUTH2 accepted for ${user}` : `login accepted for ${user}`);
}

/** nodemailer's XOAUTH2 helper, taking its token from the relay's cache (the same hook the pool uses). */
function createXOAuth2(user: string, tokens: TokenCache): XOAuth2 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like the rest of nodemailer
  const XOAuth2Class = require('nodemailer/lib/xoauth2') as typeof XOAuth2;
  return new XOAuth2Class({
    user,
    provisionCallback: (_user, renew, callback) => {
      tokens.get({ renew }).then(
        // Expiry 0: nodemailer keeps no expiry of its own; the cache decides when a token is renewed.
        (token) => callback(null, token.accessToken, 0),
        (error: Error) => callback(error, '', 0),
      );
    },
  });
}

import { z } from 'zod';
import { positiveInt, setting } from '../shared';
import { createSmtpNotifier, type SmtpConfig } from './create-smtp-notifier';
import type { SectionEnv, TransportDescriptor } from './notifier';
import { SMTP_FAILURES } from './smtp-failures';
import type { TransportContext } from './transport-context';
import {
  buildOAuth2Config,
  checkUnusedOAuth2,
  OAUTH2_FAILURES,
  OAUTH2_SETTINGS,
  oauth2Secrets,
  wantsOAuth2Login,
  type OAuth2Config,
} from './oauth2-settings';

/** Time to open an SMTP connection: a reachable server answers in well under a second, a dropped packet never. */
export const SMTP_CONNECTION_TIMEOUT_MS = 10_000;

/** Time for the SMTP server's greeting: busy servers delay it a few seconds (tarpitting), never this long. */
export const SMTP_GREETING_TIMEOUT_MS = 10_000;

/** Silence allowed on an SMTP connection: a server may take a while to accept a large message's data. */
export const SMTP_SOCKET_TIMEOUT_MS = 60_000;

/** The SMTP transport's settings. */
export const SMTP_SETTINGS = {
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
  SMTP_POOL_SIZE: setting(positiveInt(5, 100), {
    group: 'features',
    description: 'Pooled SMTP connections, and so sends in flight at once.',
  }),
};

/** What the SMTP transport reads: its section, OAuth2's (for an XOAUTH2 login) and MAIL_TRANSPORT. */
type SmtpEnv = SectionEnv<typeof SMTP_SETTINGS & typeof OAUTH2_SETTINGS> & { MAIL_TRANSPORT: string };

/** The SMTP pool, when SMTP_URL is set (and MAIL_TRANSPORT is not graph). */
export const smtpTransport: TransportDescriptor<'smtp', SmtpConfig> = {
  name: 'smtp',
  settings: SMTP_SETTINGS,
  configure: (env, context) => configureSmtp(env as SmtpEnv, context),
  create: (smtp, io) => createSmtpNotifier(smtp, io),
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
  if (e.SMTP_URL === undefined || e.MAIL_TRANSPORT === 'graph') {
    if (e.SMTP_URL !== undefined)
      issues.push({
        variable: 'SMTP_URL',
        message: 'has no effect with MAIL_TRANSPORT=graph (mail goes through Microsoft Graph): unset one of them',
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
  const user = e.SMTP_USER ?? (url?.username ? decodeURIComponent(url.username) : undefined);
  const password = e.SMTP_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined);
  return {
    url: e.SMTP_URL,
    user,
    password,
    caFile: e.SMTP_CA_FILE,
    poolSize: e.SMTP_POOL_SIZE,
    connectionTimeoutMs: SMTP_CONNECTION_TIMEOUT_MS,
    greetingTimeoutMs: SMTP_GREETING_TIMEOUT_MS,
    socketTimeoutMs: SMTP_SOCKET_TIMEOUT_MS,
    oauth2: wantsOAuth2Login(e) ? configureSmtpOAuth2(e, { user, password }, context) : undefined,
  };
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

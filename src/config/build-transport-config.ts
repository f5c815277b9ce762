import {
  checkEndpointUrl,
  buildOAuth2Config,
  wantsOAuth2Login,
  type OAuth2Config,
  type RetiredOAuth2Settings,
} from './build-oauth2-config';
import type { ConfigIssue } from './config-issue';
import {
  GRAPH_CONCURRENCY,
  GRAPH_TIMEOUT_MS,
  SMTP_CONNECTION_TIMEOUT_MS,
  SMTP_GREETING_TIMEOUT_MS,
  SMTP_SOCKET_TIMEOUT_MS,
} from './retired-settings';
import type { Env } from './schema';

/** What the transport builders read besides the parsed environment, and where they report problems. */
export interface TransportBuildContext {
  broken: ReadonlySet<string>;
  issues: ConfigIssue[];
  readFile: (file: string) => string;
  retired: RetiredOAuth2Settings;
}

/** SMTP settings, or undefined when mails go to .eml files (or Graph); problems are pushed onto `issues`. */
export function buildSmtpConfig(e: Env, context: TransportBuildContext) {
  const { broken, issues } = context;
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
  checkRecipientsRequired(e, broken, 'SMTP_URL is set', issues);
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
    oauth2: wantsOAuth2Login(e) ? buildSmtpOAuth2(e, { user, password }, context) : undefined,
  };
}

/** The app's OAuth2 credentials are given: the mailbox is required, a password refused (the login is a token). */
function buildSmtpOAuth2(e: Env, login: { user?: string; password?: string }, context: TransportBuildContext): OAuth2Config | undefined {
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

/** MAIL_TRANSPORT=graph: the sender mailbox (MAIL_FROM's address), Graph's URL and the app's credentials. */
export function buildGraphConfig(e: Env, context: TransportBuildContext) {
  if (e.MAIL_TRANSPORT !== 'graph') return undefined;
  checkRecipientsRequired(e, context.broken, 'MAIL_TRANSPORT=graph', context.issues);
  checkEndpointUrl('GRAPH_URL', e.GRAPH_URL, context.issues);
  const oauth2 = buildOAuth2Config(e, { kind: 'graph' }, context);
  if (!oauth2) return undefined;
  return {
    url: e.GRAPH_URL.replace(/\/+$/, ''),
    sender: mailboxAddress(e.MAIL_FROM),
    timeoutMs: GRAPH_TIMEOUT_MS,
    concurrency: GRAPH_CONCURRENCY,
    oauth2,
  };
}

/** `Name <user@domain>` → `user@domain`. */
function mailboxAddress(mailbox: string): string {
  return /<([^<>\s]+)>\s*$/.exec(mailbox)?.[1] ?? mailbox.trim();
}

/** Real mail needs recipients: MAIL_TO, or ROUTES_FILE naming them. */
function checkRecipientsRequired(e: Env, broken: ReadonlySet<string>, when: string, issues: ConfigIssue[]): void {
  if ((!e.MAIL_TO || e.MAIL_TO.length === 0) && e.ROUTES_FILE === undefined && !broken.has('MAIL_TO') && !broken.has('ROUTES_FILE')) {
    issues.push({
      variable: 'MAIL_TO',
      message: `is required when ${when} and there is no ROUTES_FILE (comma-separated addresses)`,
    });
  }
}

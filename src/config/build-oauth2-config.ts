import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isLoopbackHost } from '../shared';
import type { ConfigIssue } from './config-issue';
import type { Env } from './schema';
import { OAUTH2_TIMEOUT_MS } from './retired-settings';

/**
 * How the relay obtains an OAuth2 access token (client credentials, issue 18): Microsoft identity
 * platform v2 with a client secret or a certificate (a signed JWT client assertion), or a Google
 * service account (a signed JWT bearer grant that impersonates `subject`).
 */
export interface OAuth2Config {
  provider: Env['OAUTH2_PROVIDER'];
  tokenUrl: string;
  scope: string;
  /** Microsoft: the application (client) ID; Google: the service account's client_email. */
  clientId: string;
  /** Microsoft, client-secret credential; a secret. */
  clientSecret?: string;
  /** PEM private key: Microsoft's certificate credential, or the Google service account's key; a secret. */
  privateKeyPem?: string;
  /** Microsoft's certificate credential: the certificate uploaded to the app registration (PEM). */
  certificatePem?: string;
  /** Google: the mailbox the service account acts as (domain-wide delegation). */
  subject?: string;
  /** Each token request ends within this. */
  timeoutMs: number;
}

/** What uses the token: SMTP's XOAUTH2 (needs the mailbox) or Graph's sendMail. */
export type OAuth2Use = { kind: 'smtp'; user?: string } | { kind: 'graph' };

const OAUTH2_VARIABLES = [
  'OAUTH2_TENANT_ID',
  'OAUTH2_CLIENT_ID',
  'OAUTH2_CLIENT_SECRET',
  'OAUTH2_CERTIFICATE_FILE',
  'OAUTH2_PRIVATE_KEY_FILE',
  'OAUTH2_SERVICE_ACCOUNT_FILE',
  'OAUTH2_SCOPE',
  'OAUTH2_TOKEN_URL',
] as const;

const MICROSOFT_ONLY = [
  'OAUTH2_TENANT_ID',
  'OAUTH2_CLIENT_ID',
  'OAUTH2_CLIENT_SECRET',
  'OAUTH2_CERTIFICATE_FILE',
  'OAUTH2_PRIVATE_KEY_FILE',
] as const;

/** Default scopes: Exchange Online's SMTP, Graph, and Gmail (which has no narrower scope for SMTP). */
const SCOPES = {
  microsoftSmtp: 'https://outlook.office365.com/.default',
  microsoftGraph: 'https://graph.microsoft.com/.default',
  google: 'https://mail.google.com/',
};

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Issues for OAUTH2_* variables set while nothing uses OAuth2. */
export function checkUnusedOAuth2(e: Env): ConfigIssue[] {
  return OAUTH2_VARIABLES.filter((v) => e[v] !== undefined).map((variable) => ({
    variable,
    message: 'has no effect unless SMTP_AUTH=oauth2 (with SMTP_URL) or MAIL_TRANSPORT=graph',
  }));
}

/**
 * The OAuth2 settings for `use`, read and checked once at boot: every missing variable is named,
 * and the key, certificate and service-account files are read and parsed now, so a wrong file stops
 * the start rather than the first send. Problems are pushed onto `issues`.
 */
export function buildOAuth2Config(
  e: Env,
  use: OAuth2Use,
  readFile: (file: string) => string,
  issues: ConfigIssue[],
): OAuth2Config | undefined {
  const why = use.kind === 'smtp' ? 'SMTP_AUTH=oauth2' : 'MAIL_TRANSPORT=graph';
  if (use.kind === 'graph' && e.OAUTH2_PROVIDER !== 'microsoft') {
    issues.push({ variable: 'OAUTH2_PROVIDER', message: 'must be microsoft with MAIL_TRANSPORT=graph (Graph is Microsoft 365 only)' });
    return undefined;
  }
  const before = issues.length;
  checkEndpointUrl('OAUTH2_TOKEN_URL', e.OAUTH2_TOKEN_URL, issues);
  const context: BuildContext = { e, use, why, readFile, issues };
  const config = e.OAUTH2_PROVIDER === 'microsoft' ? buildMicrosoftConfig(context) : buildGoogleConfig(context);
  return issues.length === before ? config : undefined;
}

/** What a provider's builder reads (`why`: the setting that needs OAuth2) and where it reports problems. */
interface BuildContext {
  e: Env;
  use: OAuth2Use;
  why: string;
  readFile: (file: string) => string;
  issues: ConfigIssue[];
}

function buildMicrosoftConfig({ e, use, why, readFile, issues }: BuildContext): OAuth2Config | undefined {
  const required = `is required with ${why} and OAUTH2_PROVIDER=microsoft`;
  if (e.OAUTH2_TENANT_ID === undefined)
    issues.push({ variable: 'OAUTH2_TENANT_ID', message: `${required}: the Directory (tenant) ID from the app registration's Overview` });
  if (e.OAUTH2_CLIENT_ID === undefined)
    issues.push({ variable: 'OAUTH2_CLIENT_ID', message: `${required}: the Application (client) ID from the app registration's Overview` });
  if (e.OAUTH2_SERVICE_ACCOUNT_FILE !== undefined)
    issues.push({
      variable: 'OAUTH2_SERVICE_ACCOUNT_FILE',
      message: 'is for OAUTH2_PROVIDER=google; Microsoft uses a client secret or a certificate',
    });
  const certificate = e.OAUTH2_CERTIFICATE_FILE !== undefined || e.OAUTH2_PRIVATE_KEY_FILE !== undefined;
  if (e.OAUTH2_CLIENT_SECRET !== undefined && certificate) {
    issues.push({ variable: 'OAUTH2_CLIENT_SECRET', message: 'give a client secret or a certificate (OAUTH2_CERTIFICATE_FILE), not both' });
  } else if (e.OAUTH2_CLIENT_SECRET === undefined && !certificate) {
    issues.push({
      variable: 'OAUTH2_CLIENT_SECRET',
      message: `${required} unless a certificate is given (OAUTH2_CERTIFICATE_FILE and OAUTH2_PRIVATE_KEY_FILE)`,
    });
  }
  const credential = certificate ? readCertificateCredential(e, readFile, issues) : {};
  if (e.OAUTH2_TENANT_ID === undefined || e.OAUTH2_CLIENT_ID === undefined) return undefined;
  return {
    provider: 'microsoft',
    tokenUrl: e.OAUTH2_TOKEN_URL ?? `https://login.microsoftonline.com/${encodeURIComponent(e.OAUTH2_TENANT_ID)}/oauth2/v2.0/token`,
    scope: e.OAUTH2_SCOPE ?? (use.kind === 'graph' ? SCOPES.microsoftGraph : SCOPES.microsoftSmtp),
    clientId: e.OAUTH2_CLIENT_ID,
    clientSecret: e.OAUTH2_CLIENT_SECRET,
    ...credential,
    timeoutMs: OAUTH2_TIMEOUT_MS,
  };
}

/** The certificate and its private key (both PEM), parsed now so that a wrong file is named at boot. */
function readCertificateCredential(
  e: Env,
  readFile: (file: string) => string,
  issues: ConfigIssue[],
): { certificatePem?: string; privateKeyPem?: string } {
  const certificatePem = readPem('OAUTH2_CERTIFICATE_FILE', e.OAUTH2_CERTIFICATE_FILE, readFile, issues, (pem) => new X509Certificate(pem));
  const privateKeyPem = readPem('OAUTH2_PRIVATE_KEY_FILE', e.OAUTH2_PRIVATE_KEY_FILE, readFile, issues, (pem) => createPrivateKey(pem));
  return { certificatePem, privateKeyPem };
}

function readPem(
  variable: string,
  file: string | undefined,
  readFile: (file: string) => string,
  issues: ConfigIssue[],
  parse: (pem: string) => unknown,
): string | undefined {
  if (file === undefined) {
    issues.push({
      variable,
      message: 'is required with a certificate credential (OAUTH2_CERTIFICATE_FILE and OAUTH2_PRIVATE_KEY_FILE, both PEM)',
    });
    return undefined;
  }
  const pem = readConfigFile(variable, file, readFile, issues);
  if (pem === undefined) return undefined;
  try {
    parse(pem);
    return pem;
  } catch {
    issues.push({ variable, message: `${file} is not a PEM ${variable === 'OAUTH2_CERTIFICATE_FILE' ? 'certificate' : 'private key'}` });
    return undefined;
  }
}

function buildGoogleConfig({ e, use, why, readFile, issues }: BuildContext): OAuth2Config | undefined {
  for (const variable of MICROSOFT_ONLY) {
    if (e[variable] !== undefined)
      issues.push({ variable, message: 'is for OAUTH2_PROVIDER=microsoft; Google uses OAUTH2_SERVICE_ACCOUNT_FILE' });
  }
  if (e.OAUTH2_SERVICE_ACCOUNT_FILE === undefined) {
    issues.push({
      variable: 'OAUTH2_SERVICE_ACCOUNT_FILE',
      message: `is required with ${why} and OAUTH2_PROVIDER=google: the service account's JSON key file`,
    });
    return undefined;
  }
  const key = parseServiceAccount(e.OAUTH2_SERVICE_ACCOUNT_FILE, readFile, issues);
  if (!key || use.kind !== 'smtp' || use.user === undefined) return undefined;
  return {
    provider: 'google',
    tokenUrl: e.OAUTH2_TOKEN_URL ?? key.tokenUri ?? GOOGLE_TOKEN_URL,
    scope: e.OAUTH2_SCOPE ?? SCOPES.google,
    clientId: key.clientEmail,
    privateKeyPem: key.privateKey,
    // The service account acts as the mailbox it logs in to.
    subject: use.user,
    timeoutMs: OAUTH2_TIMEOUT_MS,
  };
}

/** A Google service-account key file: `{"type": "service_account", "client_email", "private_key", "token_uri"}`. */
function parseServiceAccount(
  file: string,
  readFile: (file: string) => string,
  issues: ConfigIssue[],
): { clientEmail: string; privateKey: string; tokenUri?: string } | undefined {
  const variable = 'OAUTH2_SERVICE_ACCOUNT_FILE';
  const text = readConfigFile(variable, file, readFile, issues);
  if (text === undefined) return undefined;
  let key: { type?: unknown; client_email?: unknown; private_key?: unknown; token_uri?: unknown };
  try {
    key = JSON.parse(text) as typeof key;
  } catch {
    issues.push({ variable, message: `${file} is not JSON (download a JSON key for the service account)` });
    return undefined;
  }
  const privateKey = typeof key.private_key === 'string' ? key.private_key : '';
  let keyOk = false;
  try {
    createPrivateKey(privateKey);
    keyOk = true;
  } catch {
    keyOk = false;
  }
  if (key.type !== 'service_account' || typeof key.client_email !== 'string' || !keyOk) {
    issues.push({ variable, message: `${file} is not a service-account key (type "service_account", client_email, private_key)` });
    return undefined;
  }
  const tokenUri = typeof key.token_uri === 'string' ? key.token_uri : undefined;
  if (tokenUri !== undefined) checkEndpointUrl(`${variable} token_uri`, tokenUri, issues);
  return { clientEmail: key.client_email, privateKey, tokenUri };
}

function readConfigFile(variable: string, file: string, readFile: (file: string) => string, issues: ConfigIssue[]): string | undefined {
  try {
    return readFile(file);
  } catch (error) {
    issues.push({ variable, message: `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
    return undefined;
  }
}

/**
 * Tokens and mail travel over these URLs: https only, except to a loopback address (a local test
 * double); the certificate is verified like every other TLS peer of the relay.
 */
export function checkEndpointUrl(variable: string, value: string | undefined, issues: ConfigIssue[]): void {
  if (value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    issues.push({ variable, message: 'is not a URL' });
    return;
  }
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
    issues.push({ variable, message: 'must be an https:// URL (http:// only to a loopback address, for tests)' });
  }
}

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { buildFailureFacts, httpUrl, isLoopbackHost, readSecretFile, setting, type ConfigIssue, type FailureCatalogue } from '../shared';
import type { TransportContext } from './notifier';

/** Time for one OAuth2 token request. */
export const OAUTH2_TIMEOUT_MS = 10_000;

const oauth2 = buildFailureFacts.bind(undefined, 'OAuth2 (SMTP or Graph)');

/** A token request's codes, listed by both transports that log in with OAuth2. */
export const OAUTH2_FAILURES: FailureCatalogue = {
  // Held: every mail fails alike until an operator renews the secret, which can take days.
  OAUTH2_REFUSED: oauth2(
    true,
    'server',
    "The OAuth2 token endpoint or the mail server refused the app's credentials (client secret, tenant, grant).",
    { held: true },
  ),
  OAUTH2_UNAVAILABLE: oauth2(true, 'server', 'The OAuth2 token endpoint could not be reached or is overloaded (429, 5xx): no token yet.'),
};

/** The app's credentials, read by both transports that log in with OAuth2 (SMTP's XOAUTH2 and Microsoft Graph). */
export const OAUTH2_SETTINGS = {
  OAUTH2_TENANT_ID: setting(
    z
      .string()
      .trim()
      .regex(
        /^[A-Za-z0-9.-]+$/,
        'must be the directory (tenant) ID or domain, e.g. 00000000-0000-0000-0000-000000000000 or contoso.onmicrosoft.com',
      )
      .optional(),
    { group: 'provider', description: 'Microsoft: the directory (tenant) ID or domain (required with Microsoft).' },
  ),
  OAUTH2_CLIENT_ID: setting(z.string().trim().min(1).max(200).optional(), {
    group: 'provider',
    description: 'Microsoft: the application (client) ID (required).',
  }),
  OAUTH2_CLIENT_SECRET: setting(z.string().max(1000).optional(), {
    secret: true,
    group: 'provider',
    description: "Microsoft: a client secret's value; or a certificate (OAUTH2_CERTIFICATE_FILE).",
  }),
  OAUTH2_CERTIFICATE_FILE: setting(z.string().trim().optional(), {
    group: 'provider',
    description:
      'Microsoft: one PEM file holding the certificate uploaded to the app registration and its private key (RSA), the usual bundle.',
  }),
  OAUTH2_SERVICE_ACCOUNT_FILE: setting(z.string().trim().optional(), {
    group: 'provider',
    description: "Google: the service account's JSON key; it acts as SMTP_USER. Setting it means the provider is Google.",
  }),
  OAUTH2_TOKEN_URL: setting(httpUrl.optional(), {
    group: 'provider',
    description: "The token endpoint (https:// except to loopback); default: the provider's, or the key file's token_uri.",
    defaultText: 'by provider',
  }),
};

type Env = z.infer<z.ZodObject<typeof OAUTH2_SETTINGS>>;

/** How the relay obtains an OAuth2 access token, Microsoft's or Google's. */
export type OAuth2Config = NonNullable<ReturnType<typeof buildOAuth2Config>>;

/** What uses the token: SMTP's XOAUTH2 (needs the mailbox) or Graph's sendMail. */
type OAuth2Use = { kind: 'smtp'; user?: string } | { kind: 'graph' };

/** The client secret and the private key, and each line of the key (a log line may hold one). */
export function oauth2Secrets(oauth2: OAuth2Config | undefined): string[] {
  if (!oauth2) return [];
  const keyLines = (pem: string) => pem.split(/\r?\n/).filter((line) => line.length >= 16 && !line.startsWith('-----'));
  const key = oauth2.privateKeyPem ? [oauth2.privateKeyPem, ...keyLines(oauth2.privateKeyPem)] : [];
  return [...(oauth2.provider === 'microsoft' && oauth2.clientSecret ? [oauth2.clientSecret] : []), ...key];
}

/** The OAuth2 settings for `use`, checked at boot: its files are read and parsed now. */
export function buildOAuth2Config(e: Env, use: OAuth2Use, context: Pick<TransportContext, 'readFile' | 'issues' | 'rawEnv'>) {
  const { issues } = context;
  const google = e.OAUTH2_SERVICE_ACCOUNT_FILE !== undefined;
  const microsoft = (['OAUTH2_TENANT_ID', 'OAUTH2_CLIENT_ID'] as const).filter((v) => e[v] !== undefined);
  if (google && microsoft.length > 0) {
    const message = `and ${microsoft.join(' and ')} are both set: the first means Google, the other Microsoft; keep one provider's credentials`;
    issues.push({ variable: 'OAUTH2_SERVICE_ACCOUNT_FILE', message });
    return undefined;
  }
  if (google && use.kind === 'graph') {
    const message =
      "is Google's; MAIL_TRANSPORT=graph is Microsoft 365 only (OAUTH2_TENANT_ID, OAUTH2_CLIENT_ID and a secret or certificate)";
    issues.push({ variable: 'OAUTH2_SERVICE_ACCOUNT_FILE', message });
    return undefined;
  }
  const before = issues.length;
  checkEndpointUrl('OAUTH2_TOKEN_URL', e.OAUTH2_TOKEN_URL, issues);
  const read = (variable: string, file: string) => readSecretFile(context.readFile, file, (message) => issues.push({ variable, message }));
  const config = google ? buildGoogleConfig(e, use, issues, read) : buildMicrosoftConfig(e, use, context, read);
  return issues.length === before ? config : undefined;
}

type ReadFile = (variable: string, file: string) => string | undefined;

/** A client secret, or a certificate and its key in one PEM bundle (the key may still be in its retired file, warned). */
function buildMicrosoftConfig(e: Env, use: OAuth2Use, { issues, rawEnv }: Pick<TransportContext, 'issues' | 'rawEnv'>, read: ReadFile) {
  const required = `is required with ${use.kind === 'smtp' ? "Microsoft's XOAUTH2 login" : 'MAIL_TRANSPORT=graph'}`;
  if (e.OAUTH2_TENANT_ID === undefined)
    issues.push({ variable: 'OAUTH2_TENANT_ID', message: `${required}: the Directory (tenant) ID from the app registration's Overview` });
  if (e.OAUTH2_CLIENT_ID === undefined)
    issues.push({ variable: 'OAUTH2_CLIENT_ID', message: `${required}: the Application (client) ID from the app registration's Overview` });
  const file = e.OAUTH2_CERTIFICATE_FILE;
  const retiredKeyFile = rawEnv.OAUTH2_PRIVATE_KEY_FILE;
  const certificate = file !== undefined || retiredKeyFile !== undefined;
  if (e.OAUTH2_CLIENT_SECRET !== undefined && certificate) {
    issues.push({ variable: 'OAUTH2_CLIENT_SECRET', message: 'give a client secret or a certificate (OAUTH2_CERTIFICATE_FILE), not both' });
  } else if (e.OAUTH2_CLIENT_SECRET === undefined && !certificate) {
    issues.push({
      variable: 'OAUTH2_CLIENT_SECRET',
      message: `${required} unless a certificate is given (OAUTH2_CERTIFICATE_FILE: the certificate and its private key in one PEM file)`,
    });
  }
  const variable = 'OAUTH2_CERTIFICATE_FILE';
  const credential: { certificatePem?: string; privateKeyPem?: string } = {};
  if (certificate && file === undefined) {
    issues.push({
      variable,
      message: 'is required with a certificate credential: one PEM file holding the certificate and its private key',
    });
  }
  const bundle = file === undefined ? undefined : read(variable, file);
  if (bundle !== undefined) {
    credential.certificatePem = findPem(bundle, /^CERTIFICATE$/, (pem) => new X509Certificate(pem));
    if (credential.certificatePem === undefined) issues.push({ variable, message: `${file} holds no PEM certificate` });
    if (retiredKeyFile !== undefined) {
      const keyFile = read('OAUTH2_PRIVATE_KEY_FILE', retiredKeyFile);
      credential.privateKeyPem = keyFile === undefined ? undefined : findPem(keyFile, /PRIVATE KEY$/, createPrivateKey);
      if (keyFile !== undefined && credential.privateKeyPem === undefined)
        issues.push({ variable: 'OAUTH2_PRIVATE_KEY_FILE', message: `${retiredKeyFile} is not a PEM private key` });
    } else {
      credential.privateKeyPem = findPem(bundle, /PRIVATE KEY$/, createPrivateKey);
      if (credential.privateKeyPem === undefined)
        issues.push({ variable, message: `${file} holds no PEM private key: append the certificate's private key to it (one PEM bundle)` });
    }
  }
  if (e.OAUTH2_TENANT_ID === undefined || e.OAUTH2_CLIENT_ID === undefined) return undefined;
  return {
    provider: 'microsoft' as const,
    tokenUrl: e.OAUTH2_TOKEN_URL ?? `https://login.microsoftonline.com/${encodeURIComponent(e.OAUTH2_TENANT_ID)}/oauth2/v2.0/token`,
    scope: use.kind === 'graph' ? 'https://graph.microsoft.com/.default' : 'https://outlook.office365.com/.default',
    clientId: e.OAUTH2_CLIENT_ID,
    clientSecret: e.OAUTH2_CLIENT_SECRET,
    ...credential,
    timeoutMs: OAUTH2_TIMEOUT_MS,
  };
}

/** The first PEM block whose label matches, if `parse` accepts it: alone, so the key (a secret) stays apart from the certificate. */
function findPem(text: string, label: RegExp, parse: (pem: string) => unknown): string | undefined {
  for (const [block, name] of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)) {
    if (!label.test(name)) continue;
    try {
      parse(`${block}\n`);
      return `${block}\n`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** A Google service-account key file, as the console downloads it. */
const ServiceAccountKeySchema = z.object({
  type: z.literal('service_account'),
  client_email: z.string(),
  private_key: z.string().refine((pem) => findPem(pem, /PRIVATE KEY$/, createPrivateKey) !== undefined),
  token_uri: z.string().optional(),
});

function buildGoogleConfig(e: Env, use: OAuth2Use, issues: ConfigIssue[], read: ReadFile) {
  for (const variable of ['OAUTH2_TENANT_ID', 'OAUTH2_CLIENT_ID', 'OAUTH2_CLIENT_SECRET', 'OAUTH2_CERTIFICATE_FILE'] as const) {
    if (e[variable] !== undefined)
      issues.push({
        variable,
        message: "is Microsoft's; Google (OAUTH2_SERVICE_ACCOUNT_FILE is set) uses the service account's key alone",
      });
  }
  const variable = 'OAUTH2_SERVICE_ACCOUNT_FILE';
  const file = e.OAUTH2_SERVICE_ACCOUNT_FILE ?? '';
  const text = read(variable, file);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    issues.push({ variable, message: `${file} is not JSON (download a JSON key for the service account)` });
    return undefined;
  }
  const key = ServiceAccountKeySchema.safeParse(json);
  if (!key.success) {
    issues.push({ variable, message: `${file} is not a service-account key (type "service_account", client_email, private_key)` });
    return undefined;
  }
  checkEndpointUrl(`${variable} token_uri`, key.data.token_uri, issues);
  if (use.kind !== 'smtp' || use.user === undefined) return undefined;
  return {
    provider: 'google' as const,
    tokenUrl: e.OAUTH2_TOKEN_URL ?? key.data.token_uri ?? 'https://oauth2.googleapis.com/token',
    scope: 'https://mail.google.com/', // Gmail has no narrower scope for SMTP
    clientId: key.data.client_email,
    privateKeyPem: key.data.private_key,
    subject: use.user, // the service account acts as this mailbox
    timeoutMs: OAUTH2_TIMEOUT_MS,
  };
}

/** Tokens and mail travel over these URLs: https only, except to a loopback address (a local test double). */
export function checkEndpointUrl(variable: string, value: string | undefined, issues: ConfigIssue[]): void {
  if (value === undefined) return;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url) issues.push({ variable, message: 'is not a URL' });
  else if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))
    issues.push({ variable, message: 'must be an https:// URL (http:// only to a loopback address, for tests)' });
}

import { createHash, createPublicKey, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { simpleParser, type ParsedMail } from 'mailparser';

/** What the token endpoint knows of an app: Microsoft's client secret or certificate, Google's service-account key. */
export interface OAuth2DoubleOptions {
  now: () => number;
  /** Lifetime of each token issued, in seconds (expires_in). */
  expiresInSeconds?: number;
  microsoft?: { tenant: string; clientId: string; clientSecret?: string; certificatePem?: string };
  google?: { clientEmail: string; publicKeyPem: string; subjects: string[] };
}

interface GraphSend {
  sender: string;
  token: string;
  raw: Buffer;
  parsed: ParsedMail;
}

/** How Graph's sendMail answers the next request (default 202). */
type GraphBehaviour =
  { type: 'accept' } | { type: 'throttle'; retryAfterSeconds?: number } | { type: 'error'; status: number; code: string; message: string };

export interface OAuth2Double {
  url: string;
  microsoftTokenUrl: string;
  googleTokenUrl: string;
  graphUrl: string;
  /** Token requests answered, by grant (refusals included). */
  tokenRequests: { grant: string; ok: boolean }[];
  issued: string[];
  /** The token endpoint answers 400 invalid_client / invalid_grant until set back to false. */
  setRefusing(refusing: boolean): void;
  /** Forgets every token issued so far, as a tenant's revocation would. */
  revokeAll(): void;
  /** A token issued here, not revoked, and not expired by `now()`. */
  isValid(token: string): boolean;
  graphSends: GraphSend[];
  graphAttempts: number;
  setGraphBehaviour(next: (attempt: number) => GraphBehaviour): void;
  close(): Promise<void>;
}

/**
 * A local double of the Microsoft identity platform v2 token endpoint, Google's token endpoint and
 * Graph's sendMail, on a real HTTP listener on port 0, answering in their documented shapes. Client
 * assertions and service-account grants are verified as the real endpoints do (signature, audience,
 * thumbprint, subject); tokens expire by the test's clock.
 */
export async function startOAuth2Double(options: OAuth2DoubleOptions): Promise<OAuth2Double> {
  const tokens = new Map<string, number>();
  const tokenRequests: { grant: string; ok: boolean }[] = [];
  const issued: string[] = [];
  const graphSends: GraphSend[] = [];
  let refusing = false;
  let graphAttempts = 0;
  let graphBehaviour: (attempt: number) => GraphBehaviour = () => ({ type: 'accept' });
  let base = '';

  const issue = (res: http.ServerResponse, grant: string) => {
    const token = `tok-${issued.length + 1}-${randomBytes(12).toString('hex')}`;
    const expiresIn = options.expiresInSeconds ?? 3599;
    tokens.set(token, options.now() + expiresIn * 1000);
    issued.push(token);
    tokenRequests.push({ grant, ok: true });
    sendJson(res, 200, { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token });
  };
  const refuse = (res: http.ServerResponse, grant: string, error: string, description: string) => {
    tokenRequests.push({ grant, ok: false });
    sendJson(res, 400, { error, error_description: description, error_codes: [7000215] });
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', base);
      void route(url, req, res, body).catch((error: unknown) =>
        sendJson(res, 500, { error: 'server_error', error_description: String(error) }),
      );
    });
  });

  async function route(url: URL, req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    const ms = options.microsoft;
    if (ms && req.method === 'POST' && url.pathname === `/${ms.tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(body);
      if (refusing) return refuse(res, 'client_credentials', 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
      const ok =
        form.get('grant_type') === 'client_credentials' &&
        form.get('client_id') === ms.clientId &&
        (await verifyMicrosoftClient(form, ms, `${base}${url.pathname}`, options.now()));
      if (!ok) return refuse(res, 'client_credentials', 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
      return issue(res, 'client_credentials');
    }
    const g = options.google;
    if (g && req.method === 'POST' && url.pathname === '/google/token') {
      const form = new URLSearchParams(body);
      if (refusing) return refuse(res, 'jwt-bearer', 'invalid_grant', 'Invalid JWT Signature.');
      const ok =
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
        (await verifyGoogleGrant(form.get('assertion') ?? '', g, `${base}/google/token`, options.now()));
      if (!ok)
        return refuse(res, 'jwt-bearer', 'unauthorized_client', 'Client is unauthorized to retrieve access tokens using this method.');
      return issue(res, 'jwt-bearer');
    }
    const send = /^\/v1\.0\/users\/([^/]+)\/sendMail$/.exec(url.pathname);
    if (send && req.method === 'POST') return answerSendMail(decodeURIComponent(send[1]), req, res, body);
    sendJson(res, 404, { error: { code: 'NotFound', message: 'no such route in the double' } });
  }

  async function answerSendMail(sender: string, req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    graphAttempts += 1;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!isValid(token))
      return sendJson(res, 401, {
        error: { code: 'InvalidAuthenticationToken', message: 'Access token has expired or is not yet valid.' },
      });
    if (req.headers['content-type'] !== 'text/plain')
      return sendJson(res, 400, { error: { code: 'ErrorMimeContentInvalid', message: 'Content-Type must be text/plain' } });
    const behaviour = graphBehaviour(graphAttempts);
    if (behaviour.type === 'throttle') {
      res.writeHead(429, {
        'Content-Type': 'application/json',
        ...(behaviour.retryAfterSeconds !== undefined ? { 'Retry-After': String(behaviour.retryAfterSeconds) } : {}),
      });
      res.end(JSON.stringify({ error: { code: 'ApplicationThrottled', message: 'Application is over its MailboxConcurrency limit.' } }));
      return;
    }
    if (behaviour.type === 'error') return sendJson(res, behaviour.status, { error: { code: behaviour.code, message: behaviour.message } });
    const raw = Buffer.from(body, 'base64');
    graphSends.push({ sender, token, raw, parsed: await simpleParser(raw) });
    res.writeHead(202, { 'request-id': `req-${graphAttempts}`, 'Content-Length': '0' });
    res.end();
  }

  function isValid(token: string): boolean {
    const expiresAt = tokens.get(token);
    return expiresAt !== undefined && options.now() < expiresAt;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    microsoftTokenUrl: `${base}/${options.microsoft?.tenant ?? 'none'}/oauth2/v2.0/token`,
    googleTokenUrl: `${base}/google/token`,
    graphUrl: base,
    tokenRequests,
    issued,
    setRefusing: (value) => {
      refusing = value;
    },
    revokeAll: () => tokens.clear(),
    isValid,
    graphSends,
    get graphAttempts() {
      return graphAttempts;
    },
    setGraphBehaviour: (next) => {
      graphBehaviour = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A client secret, or a client assertion signed by the registered certificate's key and naming its thumbprint. */
async function verifyMicrosoftClient(
  form: URLSearchParams,
  ms: NonNullable<OAuth2DoubleOptions['microsoft']>,
  tokenUrl: string,
  now: number,
): Promise<boolean> {
  if (ms.clientSecret !== undefined) return form.get('client_secret') === ms.clientSecret;
  if (!ms.certificatePem || form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') return false;
  const assertion = form.get('client_assertion') ?? '';
  const cert = new X509Certificate(ms.certificatePem);
  const header = decodeProtectedHeader(assertion);
  if (header['x5t#S256'] !== createHash('sha256').update(cert.raw).digest('base64url')) return false;
  return verifies(assertion, cert.publicKey, { issuer: ms.clientId, subject: ms.clientId, audience: tokenUrl }, now);
}

async function verifyGoogleGrant(
  assertion: string,
  g: NonNullable<OAuth2DoubleOptions['google']>,
  tokenUrl: string,
  now: number,
): Promise<boolean> {
  const key = createPublicKey(g.publicKeyPem);
  if (!(await verifies(assertion, key, { issuer: g.clientEmail, audience: tokenUrl }, now))) return false;
  const { payload } = await jwtVerify(assertion, key, { currentDate: new Date(now) });
  return payload.scope === 'https://mail.google.com/' && g.subjects.includes(String(payload.sub));
}

async function verifies(
  jwt: string,
  key: KeyObject,
  claims: { issuer: string; subject?: string; audience: string },
  now: number,
): Promise<boolean> {
  try {
    await jwtVerify(jwt, key, { ...claims, algorithms: ['RS256'], currentDate: new Date(now) });
    return true;
  } catch {
    return false;
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The app registration the tests use: a Microsoft tenant with a client secret. */
export const CONTOSO_APP = { tenant: 'contoso-tenant', clientId: 'relay-client-id', clientSecret: 'client-secret-Zq8Vw2Lk5' };

/** The relay's OAUTH2_* variables for {@link CONTOSO_APP} against `double` (start it with `tune: quickRetries(50, 200)`). */
export function buildContosoAppEnv(double: OAuth2Double): Record<string, string> {
  return {
    OAUTH2_TENANT_ID: CONTOSO_APP.tenant,
    OAUTH2_CLIENT_ID: CONTOSO_APP.clientId,
    OAUTH2_CLIENT_SECRET: CONTOSO_APP.clientSecret,
    OAUTH2_TOKEN_URL: double.microsoftTokenUrl,
  };
}

/** Real time moved forward by the test (a token's hour passes at once), shared by the relay and the doubles. */
export function createSkewedClock(): { now: () => number; advance: (ms: number) => void; reset: () => void } {
  let skewMs = 0;
  return {
    now: () => Date.now() + skewMs,
    advance: (ms) => {
      skewMs += ms;
    },
    reset: () => {
      skewMs = 0;
    },
  };
}

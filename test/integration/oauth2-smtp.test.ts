import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { buildContosoAppEnv, CONTOSO_APP, createSkewedClock, startOAuth2Double, type OAuth2Double } from '../helpers/oauth2-double';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates } from '../helpers/test-certificates';

const SECRET = 'oauth2-webhook-secret';
const MAILBOX = 'reports@contoso.example';
const CLIENT_SECRET = CONTOSO_APP.clientSecret;
const ADMIN_TOKEN = 'admin-token-for-oauth2-tests';
const HOUR_MS = 3_600_000;

/** The mail server's certificate, from a private CA the relay is given in SMTP_CA_FILE. */
const SERVER_CERTS = createTestCertificates(makeTempDir('relay-oauth2-server-'));

/**
 * A real smtp-server on STARTTLS (as Microsoft 365's and Google's port 587) that offers only AUTH XOAUTH2 and
 * accepts a bearer token only if the token endpoint issued it and it has not expired.
 */
async function startXoauth2Peer(double: OAuth2Double, auths: { token: string; ok: boolean }[], refuseAll = false): Promise<SmtpPeer> {
  return startSmtpPeer({
    server: {
      disabledCommands: [],
      key: SERVER_CERTS.key,
      cert: SERVER_CERTS.cert,
      authMethods: ['XOAUTH2'],
      authOptional: false,
      onAuth(auth, _session, callback) {
        const ok = !refuseAll && auth.method === 'XOAUTH2' && auth.username === MAILBOX && double.isValid(auth.accessToken ?? '');
        auths.push({ token: auth.accessToken ?? '', ok });
        if (ok) return callback(null, { user: MAILBOX });
        if (refuseAll) return callback(Object.assign(new Error('5.7.3 Authentication unsuccessful'), { responseCode: 535 }));
        // Google's and Microsoft's answer to a bad token: 334 with a JSON status, then 535 (smtp-server does the SASL part).
        callback(null, { data: { status: '401', schemes: 'bearer', scope: 'https://outlook.office365.com/.default' } });
      },
    },
  });
}

async function postReports(relay: TestRelay, ids: number[]): Promise<void> {
  for (const id of ids) {
    const body = buildBody({ data: buildReportData({ id }) });
    const res = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
  }
}

function reportIds(peer: SmtpPeer): number[] {
  return peer.received.map((m) => Number(m.parsed.headers.get('x-compliance-report-id'))).sort((a, b) => a - b);
}

function microsoftEnv(double: OAuth2Double, peer: SmtpPeer): Record<string, string> {
  return {
    SMTP_URL: peer.url,
    SMTP_CA_FILE: SERVER_CERTS.caFile,
    SMTP_USER: MAILBOX,
    MAIL_FROM: `Compliance Relay <${MAILBOX}>`,
    MAIL_TO: 'netops@contoso.example',
    WEBHOOK_SECRET: SECRET,
    ...buildContosoAppEnv(double),
  };
}

describe('OAuth2 credentials with SMTP: AUTH XOAUTH2 with a client-credentials token', () => {
  let double: OAuth2Double | undefined;
  let peer: SmtpPeer | undefined;
  let relay: TestRelay | undefined;
  const clock = createSkewedClock();
  const now = clock.now;

  afterEach(async () => {
    await relay?.stop();
    await peer?.close();
    await double?.close();
    relay = peer = double = undefined;
    clock.reset();
  });

  it('sends a burst through an XOAUTH2-only server, one token shared by the pool, renewed when it expires mid-burst: every mail exactly once', async () => {
    double = await startOAuth2Double({
      now,
      microsoft: CONTOSO_APP,
    });
    const auths: { token: string; ok: boolean }[] = [];
    peer = await startXoauth2Peer(double, auths);
    // Mid-burst the token's hour passes; the 4th mail is answered 450, so its connection closes and the
    // next mail logs in on a new one, after the expiry.
    peer.setBehaviour((attempt) => {
      if (attempt !== 4) return { type: 'accept' };
      clock.advance(HOUR_MS);
      return { type: 'reject', code: 450, message: '4.2.1 mailbox busy, try again' };
    });
    relay = await startTestRelay({ ...microsoftEnv(double, peer), SMTP_POOL_SIZE: '3' }, { clock: { now }, tune: quickRetries(50, 200) });
    const ids = Array.from({ length: 12 }, (_, i) => 700 + i);
    await postReports(relay, ids);

    await peer.waitFor(ids.length, 30_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === ids.length ? true : undefined), 10_000, 'all sent');
    expect(reportIds(peer)).toEqual(ids);
    expect((await relay.relay.store.readQueue()).counts.dead).toBe(0);
    // One token for the three pooled connections, one more after the expiry: never one per connection.
    expect(double.tokenRequests).toEqual([
      { grant: 'client_credentials', ok: true },
      { grant: 'client_credentials', ok: true },
    ]);
    // Renewed before use: the server never saw an expired token.
    expect(auths.every((a) => a.ok)).toBe(true);
    expect(auths.some((a) => a.token === double!.issued[1])).toBe(true);
    expect(relay.logs.join('\n')).not.toContain(CLIENT_SECRET);
    for (const token of double.issued) expect(relay.logs.join('\n')).not.toContain(token);
  }, 60_000);

  it('a refused token pauses the queue with the reason in /readyz and on the dashboard; nothing is dead; mail flows once the app is fixed', async () => {
    double = await startOAuth2Double({
      now,
      microsoft: CONTOSO_APP,
    });
    double.setRefusing(true);
    peer = await startXoauth2Peer(double, []);
    relay = await startTestRelay({ ...microsoftEnv(double, peer), ADMIN_TOKEN }, { tune: quickRetries(50, 200) });
    await postReports(relay, [801, 802]);

    await waitUntil(
      () => relay!.workerOutcomes.find((o) => o.settled?.state === 'retrying' && o.failure?.code === 'OAUTH2_REFUSED'),
      10_000,
      'a refused token',
    );
    const refused = relay.workerOutcomes.filter((o) => o.settled?.state === 'retrying');
    expect(refused.every((o) => o.settled?.state === 'retrying' && o.failure?.configProblem && o.failure?.scope === 'server')).toBe(true);
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
    expect(peer.received).toHaveLength(0);

    const ready = await fetch(`${relay.url}/readyz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    // The relay still accepts into the outbox, which is its job: ready (issue 17), with SMTP reported not ok.
    expect(ready.status).toBe(200);
    const readiness = (await ready.json()) as { checks: { smtp: { ok: boolean; code: string; message: string } } };
    expect(readiness.checks.smtp).toMatchObject({ ok: false, code: 'OAUTH2_REFUSED' });
    expect(readiness.checks.smtp.message).toContain('invalid_client');

    const login = await fetch(`${relay.url}/ui/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ADMIN_TOKEN}`,
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const page = await (await fetch(`${relay.url}/ui`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain('data-mail-code="OAUTH2_REFUSED"');
    expect(page).toContain('invalid_client');

    double.setRefusing(false);
    await peer.waitFor(2, 30_000);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 2 ? true : undefined), 10_000, 'both sent');
    expect(reportIds(peer)).toEqual([801, 802]);
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
  }, 60_000);

  it('535 on AUTH XOAUTH2 is a refused token too: paused, not dead-lettered', async () => {
    double = await startOAuth2Double({
      now,
      microsoft: CONTOSO_APP,
    });
    const auths: { token: string; ok: boolean }[] = [];
    peer = await startXoauth2Peer(double, auths, true);
    relay = await startTestRelay(microsoftEnv(double, peer), { tune: quickRetries(50, 200) });
    await postReports(relay, [901]);

    const outcome = await waitUntil(() => relay!.workerOutcomes.find((o) => o.settled?.state === 'retrying'), 10_000, 'a retry');
    expect(outcome.settled?.state === 'retrying' && outcome.failure?.code).toBe('OAUTH2_REFUSED');
    expect(relay.relay.worker.breaker.state).not.toBe('closed');
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
    expect(relay.logs.some((l) => l.includes('CONFIGURATION PROBLEM'))).toBe(true);
  }, 30_000);

  it('check-config shows the OAuth2 settings in force with the client secret redacted', async () => {
    const dir = makeTempDir('relay-oauth2-check-');
    const secretFile = path.join(dir, 'client-secret');
    fs.writeFileSync(secretFile, `${CLIENT_SECRET}\n`);
    const io = captureIo(
      {
        SMTP_URL: 'smtp://smtp.office365.com:587',
        SMTP_USER: MAILBOX,
        MAIL_TO: 'netops@contoso.example',
        DATA_DIR: dir,
        OAUTH2_TENANT_ID: CONTOSO_APP.tenant,
        OAUTH2_CLIENT_ID: CONTOSO_APP.clientId,
        OAUTH2_CLIENT_SECRET_FILE: secretFile,
      },
      dir,
    );
    expect(await runCli(['node', 'compliance-relay', 'check-config', '--json'], io)).toBe(0);
    const shown = JSON.parse(io.out().slice(0, io.out().lastIndexOf('}') + 1)) as { smtp: { oauth2: Record<string, unknown> } };
    expect(shown.smtp.oauth2).toMatchObject({
      provider: 'microsoft',
      tokenUrl: `https://login.microsoftonline.com/${CONTOSO_APP.tenant}/oauth2/v2.0/token`,
      scope: 'https://outlook.office365.com/.default',
      clientSecret: '[REDACTED]',
    });
    expect(io.out() + io.err()).not.toContain(CLIENT_SECRET);
  });

  it('verify-smtp shows each step with a certificate credential (Microsoft) and a service account (Google)', async () => {
    const dir = makeTempDir('relay-oauth2-cli-');
    const certs = createTestCertificates(dir);
    // The usual bundle: the certificate and its private key in one PEM file.
    fs.writeFileSync(path.join(dir, 'app-bundle.pem'), Buffer.concat([certs.cert, certs.key]));
    const { publicKey, privateKey } = await import('node:crypto').then((c) =>
      c.generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      }),
    );
    double = await startOAuth2Double({
      now,
      microsoft: { tenant: 'contoso-tenant', clientId: 'relay-client-id', certificatePem: certs.cert.toString() },
      google: { clientEmail: 'relay@project.iam.gserviceaccount.com', publicKeyPem: publicKey, subjects: [MAILBOX] },
    });
    peer = await startXoauth2Peer(double, []);
    const base = {
      SMTP_URL: peer.url,
      SMTP_CA_FILE: SERVER_CERTS.caFile,
      SMTP_USER: MAILBOX,
      MAIL_TO: 'netops@contoso.example',
      DATA_DIR: dir,
    };

    const microsoft = captureIo(
      {
        ...base,
        OAUTH2_TENANT_ID: 'contoso-tenant',
        OAUTH2_CLIENT_ID: 'relay-client-id',
        OAUTH2_CERTIFICATE_FILE: path.join(dir, 'app-bundle.pem'),
        OAUTH2_TOKEN_URL: double.microsoftTokenUrl,
      },
      dir,
    );
    expect(await runCli(['node', 'compliance-relay', 'verify-smtp'], microsoft)).toBe(0);
    expect(microsoft.out()).toMatch(/ok {2}token fetched \(expires \d{4}-\d\d-\d\dT/);
    expect(microsoft.out()).toContain(`ok  connected to 127.0.0.1:${peer.port}`);
    expect(microsoft.out()).toContain('ok  TLS: STARTTLS, certificate verified');
    expect(microsoft.out()).toContain(`ok  AUTH XOAUTH2 accepted for ${MAILBOX}`);

    const keyFile = path.join(dir, 'service-account.json');
    fs.writeFileSync(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        client_email: 'relay@project.iam.gserviceaccount.com',
        private_key: privateKey,
        token_uri: double.googleTokenUrl,
      }),
    );
    const google = captureIo({ ...base, OAUTH2_SERVICE_ACCOUNT_FILE: keyFile }, dir);
    expect(await runCli(['node', 'compliance-relay', 'verify-smtp'], google)).toBe(0);
    expect(google.out()).toContain(`ok  AUTH XOAUTH2 accepted for ${MAILBOX}`);
    expect(double.tokenRequests.map((r) => r.grant)).toEqual(['client_credentials', 'jwt-bearer']);

    // A mailbox the service account may not act as: Google refuses the grant, and the command says so.
    const other = captureIo({ ...base, SMTP_USER: 'someone-else@contoso.example', OAUTH2_SERVICE_ACCOUNT_FILE: keyFile }, dir);
    expect(await runCli(['node', 'compliance-relay', 'verify-smtp'], other)).toBe(69);
    expect(other.err()).toContain('OAUTH2_REFUSED');
    expect(other.err()).toContain('unauthorized_client');

    // A relay upgraded as it was (SMTP_AUTH, OAUTH2_PROVIDER, the key in its own file) still logs in, warned of each.
    fs.writeFileSync(path.join(dir, 'app-cert.pem'), certs.cert);
    fs.writeFileSync(path.join(dir, 'app-key.pem'), certs.key);
    const upgraded = {
      ...base,
      SMTP_AUTH: 'oauth2',
      OAUTH2_PROVIDER: 'microsoft',
      OAUTH2_TENANT_ID: 'contoso-tenant',
      OAUTH2_CLIENT_ID: 'relay-client-id',
      OAUTH2_CERTIFICATE_FILE: path.join(dir, 'app-cert.pem'),
      OAUTH2_PRIVATE_KEY_FILE: path.join(dir, 'app-key.pem'),
      OAUTH2_TOKEN_URL: double.microsoftTokenUrl,
    };
    const before = captureIo(upgraded, dir);
    expect(await runCli(['node', 'compliance-relay', 'verify-smtp'], before)).toBe(0);
    expect(before.out()).toContain(`ok  AUTH XOAUTH2 accepted for ${MAILBOX}`);
    const checked = captureIo(upgraded, dir);
    expect(await runCli(['node', 'compliance-relay', 'check-config'], checked)).toBe(0);
    expect(checked.err()).toContain('warning: SMTP_AUTH is no longer read');
    expect(checked.err()).toContain('warning: OAUTH2_PROVIDER is no longer read');
    expect(checked.err()).toContain('warning: OAUTH2_PRIVATE_KEY_FILE is read for this release only: append the private key');
  }, 30_000);
});

import { loadConfig, ConfigError } from '../../src/config';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { buildContosoAppEnv, CONTOSO_APP, createSkewedClock, startOAuth2Double, type OAuth2Double } from '../helpers/oauth2-double';
import { postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';

const SECRET = 'graph-webhook-secret';
const SENDER = 'reports@contoso.example';
const CLIENT_SECRET = CONTOSO_APP.clientSecret;
const HOUR_MS = 3_600_000;

describe('MAIL_TRANSPORT=graph: sendMail with the same MIME message (issue 18)', () => {
  let double: OAuth2Double | undefined;
  let relay: TestRelay | undefined;
  const clock = createSkewedClock();
  const now = clock.now;
  /** A relay sending through the Graph double as SENDER, with the Contoso app's credentials. */
  const graphEnv = (d: OAuth2Double): Record<string, string> => ({
    MAIL_TRANSPORT: 'graph',
    GRAPH_URL: d.graphUrl,
    MAIL_TO: 'netops@contoso.example',
    WEBHOOK_SECRET: SECRET,
    ...buildContosoAppEnv(d),
  });

  afterEach(async () => {
    await relay?.stop();
    await double?.close();
    relay = double = undefined;
    clock.reset();
  });

  it("posts each mail once, waits out 429 Retry-After, renews the token when it expires mid-burst, and dead-letters a 400 with Graph's code", async () => {
    double = await startOAuth2Double({
      now,
      microsoft: CONTOSO_APP,
    });
    double.setGraphBehaviour((attempt) => {
      if (attempt === 3) return { type: 'throttle', retryAfterSeconds: 1 };
      if (attempt === 5) clock.advance(HOUR_MS);
      return { type: 'accept' };
    });
    relay = await startTestRelay(
      { ...graphEnv(double), MAIL_FROM: `Compliance Relay <${SENDER}>`, MAIL_BCC: 'audit@contoso.example' },
      { clock: { now }, tune: quickRetries(50, 200) },
    );
    const ids = Array.from({ length: 8 }, (_, i) => 600 + i);
    for (const id of ids) {
      const body = buildBody({ data: buildReportData({ id }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
    }
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === ids.length ? true : undefined), 30_000, 'all sent');

    const sent = double.graphSends.map((s) => Number(s.parsed.headers.get('x-compliance-report-id'))).sort((a, b) => a - b);
    expect(sent).toEqual(ids);
    expect(double.graphSends.every((s) => s.sender === SENDER)).toBe(true);
    const first = double.graphSends[0].parsed;
    expect(first.from?.text).toContain(SENDER);
    expect(first.messageId).toMatch(/^<report-6\d\d\.d\d+\./);
    // The blind copy (envelope only in the stored mail) is a Bcc header for Graph, which reads recipients from the MIME.
    expect(double.graphSends[0].raw.toString('utf8')).toMatch(/^Bcc: audit@contoso\.example\r?$/m);
    const throttled = relay.workerOutcomes.find((o) => o.settled?.state === 'retrying');
    expect(throttled?.settled?.state === 'retrying' && throttled.failure?.code).toBe('GRAPH_THROTTLED');
    // The first token served until its hour passed, then one more: shared, never one per request.
    expect(double.tokenRequests).toHaveLength(2);
    expect(double.graphSends.some((s) => s.token === double!.issued[1])).toBe(true);

    // The tenant revokes the tokens: the next request gets 401 and is sent again at once with a renewed token.
    double.revokeAll();
    const next = buildBody({ data: buildReportData({ id: 640 }) });
    await postWebhook(relay.webhookUrl, next, { 'X-Hook-Signature': netboxSignature(next, SECRET) });
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === ids.length + 1 ? true : undefined),
      10_000,
      'sent after revocation',
    );
    expect(double.tokenRequests).toHaveLength(3);
    expect(double.graphSends.at(-1)?.token).toBe(double.issued[2]);
    expect(double.graphSends.filter((s) => s.parsed.headers.get('x-compliance-report-id') === '640')).toHaveLength(1);
    expect(relay.workerOutcomes.some((o) => o.settled?.state === 'retrying' && o.failure?.code === 'OAUTH2_REFUSED')).toBe(false);

    // A 4xx about the message is dead at once, with Graph's own code in the error.
    double.setGraphBehaviour(() => ({
      type: 'error',
      status: 400,
      code: 'ErrorInvalidRecipients',
      message: 'At least one recipient is not valid.',
    }));
    const body = buildBody({ data: buildReportData({ id: 650 }) });
    await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    const dead = await waitUntil(() => relay!.workerOutcomes.find((o) => o.settled?.state === 'dead'), 10_000, 'a dead delivery');
    expect(dead.settled?.state === 'dead' && dead.failure?.code).toBe('GRAPH_REJECTED');
    expect(dead.settled?.state === 'dead' && dead.failure?.message).toContain('ErrorInvalidRecipients');
    expect(relay.logs.join('\n')).not.toContain(CLIENT_SECRET);
  }, 60_000);

  it('403 (no Mail.Send for this mailbox) pauses the queue as a configuration problem; nothing is dead', async () => {
    double = await startOAuth2Double({
      now,
      microsoft: CONTOSO_APP,
    });
    double.setGraphBehaviour(() => ({
      type: 'error',
      status: 403,
      code: 'ErrorAccessDenied',
      message: 'Access is denied. Check credentials and try again.',
    }));
    relay = await startTestRelay({ ...graphEnv(double), MAIL_FROM: SENDER }, { tune: quickRetries(50, 200) });
    const body = buildBody({ data: buildReportData({ id: 660 }) });
    await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    await waitUntil(() => (double!.graphAttempts >= 2 ? true : undefined), 10_000, 'a probe after the pause');
    const retry = relay.workerOutcomes.find((o) => o.settled?.state === 'retrying');
    expect(retry?.settled?.state === 'retrying' && retry.failure).toMatchObject({
      code: 'GRAPH_ACCESS_DENIED',
      configProblem: true,
      scope: 'server',
    });
    expect((await relay.relay.store.readQueue()).counts.dead ?? 0).toBe(0);
    expect(relay.relay.transportHealth.status()).toMatchObject({ ok: false, code: 'GRAPH_ACCESS_DENIED' });
  }, 30_000);

  it('says which variable is missing, and refuses Graph with Google or beside SMTP_URL', () => {
    const load = (env: Record<string, string>) => {
      try {
        loadConfig({ MAIL_TO: 'a@example.com', ...env }, { readFile: () => '' });
        return [];
      } catch (error) {
        return (error as ConfigError).issues.map((i) => i.variable);
      }
    };
    expect(
      load({
        SMTP_URL: 'smtp://mail.example.com',
        SMTP_USER: SENDER,
        OAUTH2_CLIENT_ID: 'x',
        OAUTH2_CLIENT_SECRET: 'y',
      }),
    ).toEqual(['OAUTH2_TENANT_ID']);
    expect(
      load({
        SMTP_URL: 'smtp://mail.example.com',
        OAUTH2_TENANT_ID: 't',
        OAUTH2_CLIENT_ID: 'x',
        OAUTH2_CLIENT_SECRET: 'y',
      }),
    ).toEqual(['SMTP_USER']);
    // The provider follows from the credentials: a service account is Google's, which Graph does not take.
    expect(load({ MAIL_TRANSPORT: 'graph', OAUTH2_SERVICE_ACCOUNT_FILE: '/etc/relay/key.json' })).toEqual(['OAUTH2_SERVICE_ACCOUNT_FILE']);
    const both = (() => {
      try {
        loadConfig(
          {
            SMTP_URL: 'smtp://smtp.gmail.com',
            SMTP_USER: SENDER,
            MAIL_TO: 'a@example.com',
            OAUTH2_CLIENT_ID: 'x',
            OAUTH2_SERVICE_ACCOUNT_FILE: '/k.json',
          },
          { readFile: () => '' },
        );
        return [];
      } catch (error) {
        return (error as ConfigError).issues;
      }
    })();
    expect(both).toEqual([{ variable: 'OAUTH2_SERVICE_ACCOUNT_FILE', message: expect.stringContaining('OAUTH2_CLIENT_ID are both set') }]);
    expect(
      load({
        MAIL_TRANSPORT: 'graph',
        SMTP_URL: 'smtp://mail.example.com',
        OAUTH2_TENANT_ID: 't',
        OAUTH2_CLIENT_ID: 'x',
        OAUTH2_CLIENT_SECRET: 'y',
      }),
    ).toEqual(['SMTP_URL']);
    expect(
      load({
        MAIL_TRANSPORT: 'graph',
        OAUTH2_TENANT_ID: 't',
        OAUTH2_CLIENT_ID: 'x',
        OAUTH2_CLIENT_SECRET: 'y',
        OAUTH2_TOKEN_URL: 'http://login.example.com/token',
      }),
    ).toEqual(['OAUTH2_TOKEN_URL']);
    expect(load({ OAUTH2_CLIENT_SECRET: 'y' })).toEqual(['OAUTH2_CLIENT_SECRET']);
  });
});

import { buildBody, buildEnvelope, buildReportData, netboxSignature, pythonJsonDumps } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';

const SECRET = 'current-secret-0123';
const PREVIOUS = 'previous-secret-4567';

describe('POST /webhook answers (real listener, SQLite in a temp dir)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    // No SMTP: mails go to .eml files, which keeps this suite about the HTTP answers.
    relay = await startTestRelay(
      { WEBHOOK_SECRET: SECRET, WEBHOOK_SECRET_PREVIOUS: PREVIOUS },
      { tune: (c) => ({ ...c, webhook: { ...c.webhook, maxBytes: 4096 } }) },
    );
  });
  afterAll(() => relay.stop());

  const signed = (body: Buffer, secret = SECRET) => ({ 'X-Hook-Signature': netboxSignature(body, secret) });
  const stored = async () => (await relay.relay.store.listDeliveries({ limit: 1000 })).length;

  it('202 queued once committed, then 200 duplicate for the identical body (a NetBox retry)', async () => {
    const body = buildBody({ data: buildReportData({ id: 1001 }) });
    const first = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ status: 'queued', id: expect.any(Number) });
    expect(await relay.relay.store.getDelivery(first.json.id)).toMatchObject({
      reportId: 1001,
      dedupKey: expect.stringContaining('1001@'),
    });
    const second = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ status: 'duplicate', id: first.json.id });
  });

  it('the same report re-sent by a scheduled run with a new request_id is still a duplicate; a new report is not', async () => {
    const a = buildBody({ version: '4.3', data: buildReportData({ id: 1002 }) });
    const sameReportOtherRequest = Buffer.from(
      a.toString('utf8').replace('fc577b60-3f63-4402-8661-547adfefdd87', '00000000-0000-4000-8000-000000000000'),
    );
    const next = buildBody({ version: '4.3', data: buildReportData({ id: 1003 }) });
    expect((await postWebhook(relay.webhookUrl, a, signed(a))).status).toBe(202);
    expect((await postWebhook(relay.webhookUrl, sameReportOtherRequest, signed(sameReportOtherRequest))).json.status).toBe('duplicate');
    expect((await postWebhook(relay.webhookUrl, next, signed(next))).status).toBe(202);
  });

  it('accepts a trailing slash and the previous secret during a rotation', async () => {
    const body = buildBody({ data: buildReportData({ id: 1004 }) });
    const res = await postWebhook(`${relay.webhookUrl}/`, body, signed(body, PREVIOUS));
    expect(res.status).toBe(202);
  });

  it('accepts application/json with parameters', async () => {
    const body = buildBody({ data: buildReportData({ id: 1005 }) });
    const res = await postWebhook(relay.webhookUrl, body, { ...signed(body), 'Content-Type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(202);
  });

  it.each([
    ['updated', 'event "updated"'],
    ['deleted', 'event "deleted"'],
  ])('200 ignored for event %s (NetBox must not record it as a failure)', async (event, reason) => {
    const body = buildBody({ event, data: buildReportData({ id: 1006 }) });
    const before = await stored();
    const res = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ignored', reason: expect.stringContaining(reason) });
    expect(await stored()).toBe(before);
  });

  it('200 ignored for another object type', async () => {
    const body = Buffer.from(pythonJsonDumps({ ...buildEnvelope(), object_type: 'dcim.site', model: undefined }));
    const res = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('ignored');
  });

  it('401 SIGNATURE_MISSING / SIGNATURE_INVALID, and nothing is stored', async () => {
    const body = buildBody({ data: buildReportData({ id: 1007 }) });
    const before = await stored();
    const missing = await postWebhook(relay.webhookUrl, body);
    expect(missing.status).toBe(401);
    expect(missing.json.error).toMatchObject({ code: 'SIGNATURE_MISSING', retryable: false });
    const wrong = await postWebhook(relay.webhookUrl, body, signed(body, 'not-the-secret'));
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe('SIGNATURE_INVALID');
    expect(await stored()).toBe(before);
  });

  it('400 BODY_NOT_JSON for a signed body that is not JSON', async () => {
    const body = Buffer.from('{"event": "created", "data": ');
    const res = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('BODY_NOT_JSON');
  });

  it('422 REPORT_INVALID listing each path and message', async () => {
    const body = buildBody({ data: { ...buildReportData({ id: 1008 }), high_count: 'many', low_passed: 3, low_count: 1 } });
    const res = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe('REPORT_INVALID');
    expect(res.json.error.issues).toEqual(expect.arrayContaining([{ path: 'data.high_count', message: expect.any(String) }]));
    expect(JSON.stringify(res.json)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('413 PAYLOAD_TOO_LARGE over the size limit, before the signature is even looked at', async () => {
    const body = Buffer.from(pythonJsonDumps({ ...buildEnvelope(), padding: 'x'.repeat(5000) }));
    const res = await postWebhook(relay.webhookUrl, body, signed(body));
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a non-JSON content type', async () => {
    const body = buildBody();
    const res = await postWebhook(relay.webhookUrl, body, { ...signed(body), 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('JSON 404 for an unknown path', async () => {
    const res = await postWebhook(`${relay.url}/hooks/other`, buildBody());
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('NOT_FOUND');
  });

  it('GET /healthz answers', async () => {
    const res = await fetch(`${relay.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('WEBHOOK_PATH and an unsigned relay', () => {
  it('serves the configured path and accepts unsigned deliveries when no secret is set, warning once at boot', async () => {
    const relay = await startTestRelay({ WEBHOOK_PATH: '/netbox/compliance/' });
    try {
      const body = buildBody({ data: buildReportData({ id: 2001 }) });
      expect((await postWebhook(`${relay.url}/netbox/compliance`, body)).status).toBe(202);
      expect((await postWebhook(`${relay.url}/webhook`, body)).status).toBe(404);
      expect(relay.logs.filter((l) => l.includes('WEBHOOK_SECRET is not set'))).toHaveLength(1);
    } finally {
      await relay.stop();
    }
  });
});

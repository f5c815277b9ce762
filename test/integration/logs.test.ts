import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

describe('structured logs', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  const secret = 'logs-test-webhook-secret';

  beforeEach(async () => {
    smtp = await startSmtpPeer();
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: secret },
      { random: () => 0.5, tune: quickRetries(100, 100) },
    );
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('carries the request id and one delivery id from the request through rendering and every send attempt', async () => {
    smtp.setBehaviour((attempt) => (attempt === 1 ? { type: 'reject', code: 451, message: 'greylisted' } : { type: 'accept' }));
    const body = buildBody({ data: buildReportData({ id: 501, custom_fields: { owner: 'private-owner-name' } }) });
    const signature = netboxSignature(body, secret);
    const res = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': signature, 'X-Request-Id': 'nb-req-42' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-request-id')).toBe('nb-req-42');
    const deliveryId = res.json.id as number;
    await smtp.waitFor(1);
    await waitUntil(() => relay.workerOutcomes.some((o) => o.settled?.state === 'sent'), 10_000, 'the send');

    const lines = relay.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const stored = lines.find((l) => l.msg === 'delivery stored');
    expect(stored).toMatchObject({ reqId: 'nb-req-42', deliveryId });
    const request = lines.find((l) => l.reqId === 'nb-req-42' && l.path === '/webhook');
    expect(request).toMatchObject({ method: 'POST', status: 202, deliveryId, level: 30 });
    const ofDelivery = lines.filter((l) => l.deliveryId === deliveryId);
    expect(ofDelivery.filter((l) => l.msg === 'mail rendered').map((l) => l.attempt)).toEqual([1, 2]);
    expect(ofDelivery.find((l) => l.msg === 'send failed; will retry')).toMatchObject({ attempt: 1, code: 'SMTP_4XX' });
    expect(ofDelivery.find((l) => l.msg === 'mail sent')).toMatchObject({ attempt: 2 });

    // Neither the signature, nor the body, nor request headers reach the logs.
    const all = relay.logs.join('\n');
    expect(all).not.toContain(signature);
    expect(all).not.toContain(secret);
    expect(all).not.toContain('private-owner-name');
    expect(all).not.toContain('python-urllib3');
  });

  it('makes up a request id when the caller sends none or an unusable one', async () => {
    const res = await fetch(`${relay.url}/healthz`, { headers: { 'X-Request-Id': 'has spaces and\ttabs' } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await waitUntil(() => relay.logs.some((l) => l.includes(id!)), 5_000, 'the request line');
  });
});

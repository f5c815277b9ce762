import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';

/** Guarantee 9 (webhook half): the optional client-address allow-list and per-address rate limit. */
describe('webhook guards', () => {
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });
  const body = (id: number) => buildBody({ data: buildReportData({ id }) });

  it('WEBHOOK_ALLOWED_IPS refuses other addresses with 403 before anything is stored', async () => {
    relay = await startTestRelay({ WEBHOOK_ALLOWED_IPS: '10.0.0.0/8, 2001:db8::/32' });
    const res = await postWebhook(relay.webhookUrl, body(1));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'FORBIDDEN_ADDRESS', retryable: false });
    // Without TRUST_PROXY, X-Forwarded-For is the client's word only: ignored.
    expect((await postWebhook(relay.webhookUrl, body(2), { 'X-Forwarded-For': '10.1.2.3' })).status).toBe(403);
    expect(await relay.relay.store.listDeliveries()).toEqual([]);
  });

  it("a source's own allowed_ips refuses other addresses, and the log names that source's setting", async () => {
    const dir = makeTempDir('guards-');
    try {
      fs.writeFileSync(
        path.join(dir, 'sources.yaml'),
        ['sources:', '  - name: lab', '    webhook_secret_env: LAB_SECRET', '    allowed_ips: [10.20.0.0/16]', ''].join('\n'),
      );
      relay = await startTestRelay({
        SOURCES_FILE: path.join(dir, 'sources.yaml'),
        LAB_SECRET: 'lab-webhook-secret',
        WEBHOOK_SECRET: 'default-webhook-secret',
      });
      const labBody = body(1);
      const refused = await postWebhook(`${relay.url}/webhook/lab`, labBody, {
        'X-Hook-Signature': netboxSignature(labBody, 'lab-webhook-secret'),
      });
      expect(refused.status).toBe(403);
      expect(refused.json.error).toMatchObject({ code: 'FORBIDDEN_ADDRESS', retryable: false });
      expect(relay.logs.join('\n')).toContain('client address not in SOURCES_FILE source lab allowed_ips');
      // The default path has no allow-list of its own: the lab's list does not apply to it.
      const plain = body(2);
      expect(
        (await postWebhook(relay.webhookUrl, plain, { 'X-Hook-Signature': netboxSignature(plain, 'default-webhook-secret') })).status,
      ).toBe(202);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('honours X-Forwarded-For from a trusted proxy, for IPv4 and IPv6 ranges', async () => {
    relay = await startTestRelay({ WEBHOOK_ALLOWED_IPS: '10.0.0.0/8, 2001:db8::/32, 127.0.0.1', TRUST_PROXY: 'loopback' });
    expect((await postWebhook(relay.webhookUrl, body(1), { 'X-Forwarded-For': '10.1.2.3' })).status).toBe(202);
    expect((await postWebhook(relay.webhookUrl, body(2), { 'X-Forwarded-For': '2001:db8::7' })).status).toBe(202);
    expect((await postWebhook(relay.webhookUrl, body(3), { 'X-Forwarded-For': '192.0.2.1' })).status).toBe(403);
    expect((await postWebhook(relay.webhookUrl, body(4), { 'X-Forwarded-For': '2001:db9::1' })).status).toBe(403);
    expect((await postWebhook(relay.webhookUrl, body(5))).status).toBe(202);
    expect((await relay.relay.store.listDeliveries()).map((d) => d.sender).sort()).toEqual(['10.1.2.3', '127.0.0.1', '2001:db8::7']);
  });

  it('WEBHOOK_RATE_LIMIT answers 429 with Retry-After per client address', async () => {
    relay = await startTestRelay({ WEBHOOK_RATE_LIMIT: '3', TRUST_PROXY: 'loopback' });
    for (let i = 1; i <= 3; i += 1)
      expect((await postWebhook(relay.webhookUrl, body(i), { 'X-Forwarded-For': '10.0.0.1' })).status).toBe(202);
    const limited = await postWebhook(relay.webhookUrl, body(4), { 'X-Forwarded-For': '10.0.0.1' });
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another NetBox is not held back by the first one.
    expect((await postWebhook(relay.webhookUrl, body(5), { 'X-Forwarded-For': '10.0.0.2' })).status).toBe(202);
    expect((await relay.relay.store.listDeliveries()).map((d) => d.reportId).sort()).toEqual([1, 2, 3, 5]);
  });

  it('both are off by default', async () => {
    relay = await startTestRelay({});
    for (let i = 1; i <= 30; i += 1) expect((await postWebhook(relay.webhookUrl, body(i))).status).toBe(202);
  });
});

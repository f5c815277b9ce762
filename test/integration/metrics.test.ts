import net from 'node:net';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { sampleValue, scrape } from '../helpers/prometheus';
import { postWebhook, quickNetbox, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { REFUSED_PORT } from '../helpers/http-listener';

const secret = 'metrics-test-webhook-secret';

function signed(id: number, options: { event?: string } = {}) {
  const body = buildBody({
    version: '4.6',
    event: options.event,
    data: buildReportData({ id, created: `2026-03-06T15:11:${String(id % 60).padStart(2, '0')}.000000Z` }),
  });
  return { body, headers: { 'X-Hook-Signature': netboxSignature(body, secret) } };
}

describe('GET /metrics', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let now: number;

  beforeEach(async () => {
    now = Date.parse('2026-03-06T16:00:00Z');
    smtp = await startSmtpPeer();
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'netops@example.com',
        WEBHOOK_SECRET: secret,
      },
      { clock: { now: () => now }, random: () => 0.99, tune: quickRetries(3_600_000, 3_600_000) },
    );
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  it('counts deliveries by outcome, sends and failures by reason, and reads the queue from the store', async () => {
    const before = await scrape(relay.url);
    expect(before).toContain('# TYPE compliance_relay_deliveries_received_total counter');
    expect(sampleValue(before, 'compliance_relay_deliveries_received_total', { outcome: 'queued' })).toBe(0);
    expect(sampleValue(before, 'compliance_relay_mails_sent_total')).toBe(0);
    expect(sampleValue(before, 'compliance_relay_queue_deliveries', { state: 'queued' })).toBe(0);
    // Process defaults are there too.
    expect(sampleValue(before, 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(before, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    const one = signed(1);
    expect((await postWebhook(relay.webhookUrl, one.body, one.headers)).status).toBe(202);
    expect((await postWebhook(relay.webhookUrl, one.body, one.headers)).status).toBe(200);
    const updated = signed(2, { event: 'updated' });
    expect((await postWebhook(relay.webhookUrl, updated.body, updated.headers)).status).toBe(200);
    expect((await postWebhook(relay.webhookUrl, one.body, { 'X-Hook-Signature': 'ab'.repeat(64) })).status).toBe(401);
    expect((await postWebhook(relay.webhookUrl, one.body, { 'Content-Type': 'text/plain', ...one.headers })).status).toBe(415);
    await smtp.waitFor(1);
    await waitUntil(() => relay.workerOutcomes.length === 1, 10_000, 'the send outcome');

    let text = await scrape(relay.url);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { outcome: 'queued' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { outcome: 'duplicate' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { outcome: 'ignored', code: 'OTHER_EVENT' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { outcome: 'rejected', code: 'SIGNATURE_INVALID' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_deliveries_received_total', { outcome: 'rejected', code: 'UNSUPPORTED_MEDIA_TYPE' })).toBe(
      1,
    );
    expect(sampleValue(text, 'compliance_relay_mails_sent_total')).toBe(1);
    expect(sampleValue(text, 'compliance_relay_send_duration_seconds_count', { result: 'sent' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_queue_deliveries', { state: 'sent' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_oldest_pending_delivery_age_seconds')).toBe(0);

    // A 4xx about this message (450; a 421/451 would pause the whole queue): the delivery waits for
    // its retry (an hour away), and its age grows with the clock.
    smtp.setBehaviour({ type: 'reject', code: 450, message: 'mailbox busy, try later' });
    const two = signed(3);
    expect((await postWebhook(relay.webhookUrl, two.body, two.headers)).status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length === 2, 10_000, 'the 450');
    now += 90_000;
    // A 5xx: dead at once.
    smtp.setBehaviour({ type: 'reject', code: 550, message: 'no such user' });
    const three = signed(4);
    expect((await postWebhook(relay.webhookUrl, three.body, three.headers)).status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length === 3, 10_000, 'the 550');

    text = await scrape(relay.url);
    expect(sampleValue(text, 'compliance_relay_mail_failures_total', { reason: 'SMTP_4XX', then: 'retry' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_mail_failures_total', { reason: 'SMTP_5XX', then: 'dead' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_send_duration_seconds_count', { result: 'failed' })).toBe(2);
    expect(sampleValue(text, 'compliance_relay_queue_deliveries', { state: 'retrying' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_queue_deliveries', { state: 'dead' })).toBe(1);
    expect(sampleValue(text, 'compliance_relay_oldest_pending_delivery_age_seconds')).toBe(90);

    relay.relay.metrics.recordNetboxFetchError('404');
    text = await scrape(relay.url);
    expect(sampleValue(text, 'compliance_relay_netbox_fetch_errors_total', { reason: '404' })).toBe(1);
  });

  it('counts a webhook in flight while its body arrives, and none once each was answered, refused or abandoned', async () => {
    // An operator reads this as webhooks waiting for their answer: a count left behind would say some wait for good.
    const inFlight = async () => sampleValue(await scrape(relay.url), 'compliance_relay_webhooks_in_flight');
    expect(await inFlight()).toBe(0);
    const one = signed(11);
    expect((await postWebhook(relay.webhookUrl, one.body, one.headers)).status).toBe(202);
    expect((await postWebhook(relay.webhookUrl, one.body, { 'X-Hook-Signature': 'ab'.repeat(64) })).status).toBe(401);
    expect((await postWebhook(relay.webhookUrl, one.body, { 'Content-Type': 'text/plain', ...one.headers })).status).toBe(415);
    expect(await inFlight()).toBe(0);

    const { port } = new URL(relay.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const path = new URL(relay.webhookUrl).pathname;
    try {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n{"event": `);
      await waitUntil(async () => (await inFlight()) === 1, 5_000, 'the webhook counted while its body arrives');
    } finally {
      socket.destroy();
    }
    await waitUntil(async () => (await inFlight()) === 0, 5_000, 'the abandoned webhook no longer counted');
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let relay: TestRelay;
  const token = 'scrape-token-0123456789';
  beforeEach(async () => {
    relay = await startTestRelay({ METRICS_TOKEN: token });
  });
  afterEach(() => relay.stop());

  it('answers 401 without the bearer token and the series with it', async () => {
    const anonymous = await fetch(`${relay.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    expect((await fetch(`${relay.url}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect(await scrape(relay.url, token)).toContain('compliance_relay_mails_sent_total 0');
    expect(relay.logs.join('')).not.toContain(token);
  });
});

describe('NetBox fetch errors', () => {
  let relay: TestRelay;
  afterEach(() => relay.stop());

  it('count in /metrics when enrichment cannot reach NetBox, and the log line names the delivery', async () => {
    // Every NetBox request is refused.
    relay = await startTestRelay(
      { NETBOX_URL: `http://127.0.0.1:${REFUSED_PORT}`, NETBOX_TOKEN: '0123456789abcdef0123456789abcdef01234567' },
      { tune: quickNetbox(2000) },
    );
    expect(sampleValue(await scrape(relay.url), 'compliance_relay_netbox_fetch_errors_total', { reason: 'UNREACHABLE' })).toBeUndefined();

    const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 9, total_passed: 5, total_count: 8 }) }));
    expect(res.status).toBe(202);
    await waitUntil(() => relay.workerOutcomes.length === 1, 15_000, 'the send');
    expect(relay.workerOutcomes[0].settled?.state).toBe('sent');
    expect(sampleValue(await scrape(relay.url), 'compliance_relay_netbox_fetch_errors_total', { reason: 'UNREACHABLE' })).toBe(1);
    const line = relay.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'mail goes without the failing results: NetBox could not provide them');
    expect(line).toMatchObject({ deliveryId: res.json.id, reportId: 9, code: 'UNREACHABLE' });
  });
});

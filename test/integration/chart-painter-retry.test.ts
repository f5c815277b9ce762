import fs from 'node:fs';
import path from 'node:path';
import { ChartPainterError, paintChartInThread, stopChartPainter, type PaintChart } from '../../src/mail';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'painter-webhook-secret';
const ROUTES_FILE_NAME = 'routes.yaml';

/** A temp dir holding a routes file with one digest route, `daily`, ticking at 08:00 UTC. */
function writeDailyDigestRoute(prefix: string): string {
  const dir = makeTempDir(prefix);
  fs.writeFileSync(
    path.join(dir, ROUTES_FILE_NAME),
    'routes:\n  - name: daily\n    to: digest@example.com\n    digest: { schedule: "0 8 * * *", timezone: UTC }\n',
  );
  return dir;
}

/** A painter whose first chart meets a thread that ended; the next ones are painted by the real painter thread. */
function failingOnce(): { paintChart: PaintChart; painted: string[] } {
  const painted: string[] = [];
  const paintChart: PaintChart = (svg, options) => {
    painted.push(svg);
    if (painted.length === 1) return Promise.reject(new ChartPainterError('the chart painter thread ended (exit code 1)'));
    return paintChartInThread(svg, options);
  };
  return { paintChart, painted };
}

/**
 * The trend chart is painted on a thread of its own. Should that thread stop with a chart unpainted (a
 * crash, out of memory), nothing is wrong with the report: the delivery is tried again, and its mail
 * goes out once, with its chart, instead of dead or without the chart.
 */
/** Posts a signed report (created at `created`, else the helper's default) and expects it stored. */
async function postReport(relay: TestRelay, id: number, created?: string): Promise<void> {
  const body = buildBody({ version: '4.6', data: buildReportData({ id, ...(created ? { created } : {}) }) });
  expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
}

describe('the chart painter thread stops while a report mail waits for its chart', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });
  afterAll(async () => {
    await smtp.close();
    await stopChartPainter();
  });
  const outcomesOf = (r: TestRelay) => r.workerOutcomes.map((o) => (o.type === 'retry' ? `retry ${o.failure.code}` : o.type));

  test('the delivery is retried (CHART_PAINTER) and mailed once, with its chart', async () => {
    const { paintChart, painted } = failingOnce();
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET, RETRY_BASE_MS: '50', RETRY_MAX_DELAY_MS: '100' },
      { paintChart },
    );
    // A report before it: the first report of a series has no chart (one point is not a trend).
    await postReport(relay, 60, '2023-04-11T19:36:33.690567Z');
    await smtp.waitFor(1, 20_000);
    await waitUntil(() => relay!.workerOutcomes.some((o) => o.type === 'sent') || undefined, 10_000, 'the first sent outcome');
    await postReport(relay, 61);

    const mail = (await smtp.waitFor(2, 20_000))[1];
    await waitUntil(() => relay!.workerOutcomes.filter((o) => o.type === 'sent').length === 2 || undefined, 10_000, 'the sent outcome');
    expect(outcomesOf(relay)).toEqual(['sent', 'retry CHART_PAINTER', 'sent']);
    expect(await relay.relay.store.countByState()).toMatchObject({ sent: 2, dead: 0 });
    // The retry paints the same chart again, and the mail carries it.
    expect(painted).toHaveLength(2);
    expect(painted[1]).toBe(painted[0]);
    const chart = mail.parsed.attachments.find((a) => a.contentDisposition === 'inline');
    expect(chart).toMatchObject({ filename: 'report-61-trend.png', contentType: 'image/png' });
    expect(chart!.content.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(smtp.received).toHaveLength(2);
  });
  test('a digest whose chart meets a stopped thread is retried and sent once, with its chart', async () => {
    const dir = writeDailyDigestRoute('painter-digest-');
    // Tuesday 3 March 2026, 12:00 UTC; the digest's tick is 08:00 UTC the next day.
    let now = Date.parse('2026-03-03T12:00:00Z');
    const { paintChart, painted } = failingOnce();
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, ROUTES_FILE_NAME), RETRY_BASE_MS: '50', RETRY_MAX_DELAY_MS: '100' },
      { clock: { now: () => now }, dataDir: dir, paintChart },
    );
    expect(await relay.relay.digests.evaluate()).toEqual([]); // the first start records the tick just past
    const created = new Date(now).toISOString().replace('.000Z', '.000000Z');
    expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 71, created }) }))).status).toBe(202);
    now = Date.parse('2026-03-04T08:00:05Z');
    expect(await relay.relay.digests.evaluate()).toHaveLength(1);
    await waitUntil(() => relay!.workerOutcomes.some((o) => o.type === 'retry') || undefined, 10_000, 'the retry');
    now += 60_000; // past the retry's backoff, on the relay's clock
    await waitUntil(
      () => smtp.received.some((m) => m.parsed.headers.get('x-compliance-digest') === 'daily') || undefined,
      10_000,
      'the digest',
    );
    await waitUntil(() => relay!.workerOutcomes.filter((o) => o.type === 'sent').length === 1 || undefined, 10_000, 'the sent outcome');
    const digests = smtp.received.filter((m) => m.parsed.headers.get('x-compliance-digest') === 'daily');
    expect(digests).toHaveLength(1);
    // The report itself is suppressed (its only route is the digest); the digest is retried, then sent.
    expect(outcomesOf(relay).sort()).toEqual(['retry CHART_PAINTER', 'sent', 'suppressed']);
    expect(painted).toHaveLength(2);
    const chart = digests[0].parsed.attachments.find((a) => a.contentType === 'image/png');
    expect(chart?.contentDisposition).toBe('inline');
    expect(chart!.content.subarray(1, 4).toString('latin1')).toBe('PNG');
  });
});

/**
 * A chart the renderer refuses (a fault of the chart itself, not of the thread) is no reason to hold the
 * mail: the report mail and the digest go out at once, once, without the chart and without a broken image.
 */
describe('a chart that cannot be drawn', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  const refusing: PaintChart = () => Promise.reject(new Error('SVG data parsing failed cause UnknownToken'));
  beforeAll(async () => {
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    smtp.received.length = 0;
  });
  afterAll(() => smtp.close());
  const outcomesOf = (r: TestRelay) => r.workerOutcomes.map((o) => (o.type === 'retry' ? `retry ${o.failure.code}` : o.type));

  test('the report mail is sent once, without its chart, and the reason is logged', async () => {
    relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET }, { paintChart: refusing });
    await postReport(relay, 59, '2023-04-11T19:36:33.690567Z');
    await smtp.waitFor(1, 20_000);
    await postReport(relay, 62);

    const mail = (await smtp.waitFor(2, 20_000))[1];
    await waitUntil(() => relay!.workerOutcomes.filter((o) => o.type === 'sent').length === 2 || undefined, 10_000, 'the sent outcome');
    expect(outcomesOf(relay)).toEqual(['sent', 'sent']);
    expect(mail.parsed.attachments.filter((a) => a.contentType === 'image/png')).toEqual([]);
    expect(String(mail.parsed.html)).not.toContain('cid:');
    expect(mail.parsed.subject).toContain('\u2014 report 62');
    expect(relay.logs.some((l) => l.includes('mail goes without its trend chart'))).toBe(true);
  });

  test('the digest is sent once, without that chart, and the reason is logged', async () => {
    const dir = writeDailyDigestRoute('painter-digest-refused-');
    let now = Date.parse('2026-03-03T12:00:00Z');
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, ROUTES_FILE_NAME) },
      { clock: { now: () => now }, dataDir: dir, paintChart: refusing },
    );
    expect(await relay.relay.digests.evaluate()).toEqual([]);
    const created = new Date(now).toISOString().replace('.000Z', '.000000Z');
    expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 72, created }) }))).status).toBe(202);
    now = Date.parse('2026-03-04T08:00:05Z');
    expect(await relay.relay.digests.evaluate()).toHaveLength(1);

    const [digest] = await smtp.waitFor(1, 20_000);
    await waitUntil(() => relay!.workerOutcomes.length === 2 || undefined, 10_000, 'both outcomes');
    expect(outcomesOf(relay).sort()).toEqual(['sent', 'suppressed']);
    expect(digest.parsed.headers.get('x-compliance-digest')).toBe('daily');
    expect(digest.parsed.attachments.filter((a) => a.contentType === 'image/png')).toEqual([]);
    // The series is still there, in words; only its picture is gone.
    expect(String(digest.parsed.html)).not.toContain('cid:');
    expect(String(digest.parsed.html)).toContain('latest: report 72');
    expect(relay.logs.some((l) => l.includes('digest goes without one of its charts'))).toBe(true);
    expect(smtp.received).toHaveLength(1);
  });
});

import { ChartPainterError, paintChartInThread, stopChartPainter, type PaintChart } from '../../src/mail';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'painter-webhook-secret';

/**
 * The trend chart is painted on a thread of its own. Should that thread stop with a chart unpainted (a
 * crash, out of memory), nothing is wrong with the report: the delivery is tried again, and its mail
 * goes out once, with its chart, instead of dead or without the chart.
 */
describe('the chart painter thread stops while a report mail waits for its chart', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
  });
  afterAll(async () => {
    await relay?.stop();
    await smtp.close();
    await stopChartPainter();
  });

  test('the delivery is retried (CHART_PAINTER) and mailed once, with its chart', async () => {
    const painted: string[] = [];
    // The first chart meets a thread that ended; the next ones are painted by the real painter thread.
    const paintChart: PaintChart = (svg, options) => {
      painted.push(svg);
      if (painted.length === 1) return Promise.reject(new ChartPainterError('the chart painter thread ended (exit code 1)'));
      return paintChartInThread(svg, options);
    };
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET, RETRY_BASE_MS: '50', RETRY_MAX_DELAY_MS: '100' },
      { paintChart },
    );
    const body = buildBody({ version: '4.6', data: buildReportData({ id: 61 }) });
    expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);

    const [mail] = await smtp.waitFor(1, 20_000);
    await waitUntil(() => relay!.workerOutcomes.some((o) => o.type === 'sent') || undefined, 10_000, 'the sent outcome');
    const outcomes = relay.workerOutcomes.map((o) => (o.type === 'retry' ? `retry ${o.failure.code}` : o.type));
    expect(outcomes).toEqual(['retry CHART_PAINTER', 'sent']);
    expect(await relay.relay.store.countByState()).toMatchObject({ sent: 1, dead: 0 });
    // The retry paints the same chart again, and the mail carries it.
    expect(painted).toHaveLength(2);
    expect(painted[1]).toBe(painted[0]);
    const chart = mail.parsed.attachments.find((a) => a.contentDisposition === 'inline');
    expect(chart).toMatchObject({ filename: 'report-61-trend.png', contentType: 'image/png' });
    expect(chart!.content.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(smtp.received).toHaveLength(1);
  });
});

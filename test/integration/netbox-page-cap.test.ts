import { createNetboxClient, MAX_PAGE_KEPT_BYTES, NetboxError } from '../../src/netbox';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';
import { startHttpListener, type HttpListener } from '../helpers/http-listener';
import { startSmtpPeer } from '../helpers/smtp-peer';

/** A NetBox page is held in memory only up to a cap; a page over it is a NetBox failure, said in the mail. */

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const CREATED = '2026-03-06T15:11:18.123456Z';

/** One result of ordinary fields (no explanation) with a long device name: what the relay must hold. */
function result(i: number, pad: string): string {
  return `{"id": ${i}, "passed": false, "test": {"id": 1, "name": "ntp", "severity": "HIGH"}, "device": {"id": ${i}, "name": "sw-${i}-${pad}"}}`;
}

/** Answers a results list with one page of `results` results (of ordinary fields), streamed; a report with itself. */
function startBigPageNetbox(results: number, padBytes: number): Promise<HttpListener> {
  const pad = 'x'.repeat(padBytes);
  return startHttpListener((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (!req.url?.includes('/test-results/')) return void res.end(JSON.stringify({ id: 93, created: CREATED }));
    res.write(`{"count": ${results}, "next": null, "previous": null, "results": [`);
    let i = 0;
    const more = () => {
      while (i < results) {
        const ok = res.write(`${i ? ', ' : ''}${result(i, pad)}`);
        i += 1;
        if (!ok) return void res.once('drain', more);
      }
      res.end(']}');
    };
    res.on('error', () => undefined);
    more();
  });
}

describe('NetBox pages are capped in memory', () => {
  it(`a page holding more than ${MAX_PAGE_KEPT_BYTES} bytes of ordinary fields is refused (PROTOCOL) before it is all read`, async () => {
    // 1,000 results of 20 KB each: 20 MB that would all be parsed and held.
    const netbox = await startBigPageNetbox(1_000, 20_000);
    const client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5_000 });
    try {
      let items = 0;
      const error = await client
        .streamList('/api/plugins/validity/test-results/?report_id=1', (page) => (items += page.length), { deadline: Date.now() + 30_000 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NetboxError);
      expect(error).toMatchObject({
        code: 'PROTOCOL',
        message: `a NetBox page holds more than ${MAX_PAGE_KEPT_BYTES} bytes besides explanations`,
      });
      expect(items).toBe(0);
    } finally {
      client.close();
      await netbox.close();
    }
  });

  it('a page within the cap is read as before', async () => {
    const netbox = await startBigPageNetbox(1_000, 500);
    const client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5_000 });
    try {
      const read = await client.streamList('/api/plugins/validity/test-results/?report_id=1', () => undefined, {
        deadline: Date.now() + 30_000,
      });
      expect(read).toEqual({ pages: 1, items: 1_000, count: 1_000 });
    } finally {
      client.close();
      await netbox.close();
    }
  });

  it('the report mail goes out without the failing tests, saying why, as when NetBox is down', async () => {
    const netbox = await startBigPageNetbox(1_000, 20_000);
    const smtp = await startSmtpPeer();
    const relay = await startTestRelay({ SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN });
    try {
      const body = buildBody({
        version: '4.6',
        data: buildReportData({ id: 93, created: CREATED, total_passed: 1, total_count: 2, high_passed: 1, high_count: 2 }),
      });
      expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
      const [mail] = await smtp.waitFor(1);
      await waitUntil(() => relay.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
      expect(relay.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
      const text = String(mail.parsed.text).replace(/\s+/g, ' ');
      expect(text).toContain(
        `Failing tests are not listed: NetBox's answer was not what its API sends (a NetBox page holds more than ${MAX_PAGE_KEPT_BYTES} bytes besides explanations).`,
      );
    } finally {
      await relay.stop();
      await smtp.close();
      await netbox.close();
    }
  });
});

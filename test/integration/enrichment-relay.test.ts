import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import type { Config } from '../../src/config';
import { makeTempDir, postWebhook, quickNetbox, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'n3tb0x-webhook-s3cret';
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];

describe('the relay reads the failing results from NetBox when it mails a report', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  beforeEach(async () => {
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await netbox.close();
    await smtp.close();
  });

  async function start(env: Record<string, string>, tune?: (config: Config) => Config): Promise<TestRelay> {
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET, NETBOX_TOKEN: TOKEN, ...env },
      { tune },
    );
    return relay;
  }

  async function deliver(r: TestRelay, id: number, results = buildResults(12, { fails: (i) => i % 3 === 0, tests: TESTS })): Promise<void> {
    netbox.reports.set(id, { id, created: '2026-03-06T15:11:18.123456Z', results });
    const body = buildBody({
      version: '4.6',
      data: buildReportData({ id, created: '2026-03-06T15:11:18.123456Z', ...countResults(results) }),
    });
    const res = await postWebhook(r.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
  }

  it('mails the failing tests and devices, with a CSV on the route that attaches it, and never logs the token', async () => {
    const dir = makeTempDir('enrichment-relay-');
    const routesFile = path.join(dir, 'routes.yaml');
    fs.writeFileSync(
      routesFile,
      [
        'routes:',
        '  - { name: analysts, to: analysts@example.com, attach_csv: true, continue: true }',
        '  - { name: noc, to: noc@example.com }',
      ].join('\n'),
    );
    const r = await start({ NETBOX_URL: netbox.url, ROUTES_FILE: routesFile });
    await deliver(r, 77);
    const received = await smtp.waitFor(2);
    const byRoute = (name: string) => received.find((m) => m.parsed.headers.get('x-compliance-route') === name)!.parsed;
    const mail = byRoute('analysts');
    const text = String(mail.text);
    expect(text).toContain('WHAT FAILED: 4 failing results in 2 tests');
    expect(text).toContain(`sw-000  ${netbox.url}/plugins/validity/test-results/1000/`);
    // One attached file, the CSV; no chart: the first report of a series has no trend to draw.
    const files = mail.attachments.filter((a) => a.contentDisposition !== 'inline');
    expect(files.map((a) => [a.filename, a.contentType])).toEqual([['report-77-failures.csv', 'text/csv']]);
    expect(mail.attachments.filter((a) => a.contentDisposition === 'inline')).toEqual([]);
    expect(files[0].content.toString('utf8')).toContain(
      `sw-003,snmp-community,MIDDLE,${netbox.url}/plugins/validity/test-results/1003/\r\n`,
    );
    // The route without attach_csv: the same failing tests, no file attached.
    const noc = byRoute('noc');
    expect(String(noc.text)).toContain('WHAT FAILED: 4 failing results in 2 tests');
    expect(noc.attachments).toEqual([]);
    // The webhook was answered before NetBox was asked: the results were read by the worker.
    expect(netbox.requests[0].authorization).toBe(`Token ${TOKEN}`);
    expect(r.logs.join('\n')).not.toContain(TOKEN);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('still sends the mail, with the counts and why the details are missing, when NetBox is down', async () => {
    const url = netbox.url;
    await netbox.close();
    const r = await start({ NETBOX_URL: url }, quickNetbox(2000, 1000));
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` }); // for afterEach; not the relay's NetBox
    await deliver(r, 78);
    const [mail] = await smtp.waitFor(1);
    expect(mail.parsed.subject).toMatch(/^First: 66\.7%, 2 HIGH failing \u2014 report 78 /);
    expect(String(mail.parsed.text)).toContain(`Failing tests are not listed: NetBox at ${url} could not be reached (ECONNREFUSED).`);
    await waitUntil(() => r.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    expect(r.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
    expect(r.logs.some((l) => l.includes('mail goes without the failing results'))).toBe(true);
  });
});

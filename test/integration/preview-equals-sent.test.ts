import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { runCli } from '../../src/cli';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'n3tb0x-webhook-s3cret';
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
];
const ROUTES = `
routes:
  - name: on-call
    match: { failed: { severity: HIGH, above: 0 } }
    to: oncall@example.com
    subject: "[on-call] {{defaultSubject}}"
    attach_csv: true
    continue: true
  - name: auditors
    to: auditors@example.com
`;

/**
 * Issue 17, item 5: `preview --id N` renders the mail the relay sent, route by route: the same
 * subject, text and HTML bodies, Message-ID and CSV attachment, with the trend and the failing tests
 * read from the store — even after NetBox has deleted the report's results (validity keeps only the
 * newest few). Only the Date header differs: the preview is composed now.
 */
describe('preview --id renders exactly the mail that was sent', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;

  beforeEach(async () => {
    dir = makeTempDir('preview-equals-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    DATA_DIR: path.join(dir, 'data'),
    ROUTES_FILE: path.join(dir, 'routes.yaml'),
    MAIL_FROM: 'Compliance <relay@example.com>',
    SMTP_URL: smtp.url,
    WEBHOOK_SECRET: SECRET,
    NETBOX_URL: netbox.url,
    NETBOX_TOKEN: TOKEN,
  });

  async function deliver(r: TestRelay, id: number, created: string, fails: (i: number) => boolean): Promise<number> {
    const results = buildResults(12, { firstId: id * 100, fails, tests: TESTS });
    netbox.reports.set(id, { id, created, results });
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
    const res = await postWebhook(r.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
    return res.json.id as number;
  }

  it('matches the sent mail of each route: subject, text, HTML, Message-ID and CSV, with the trend and the failing tests', async () => {
    relay = await startTestRelay(env(), { dataDir: path.join(dir, 'data') });
    await deliver(relay, 50, '2026-03-05T06:00:00.000000Z', (i) => i % 4 === 0);
    await smtp.waitFor(2);
    const id = await deliver(relay, 51, '2026-03-06T06:00:00.000000Z', (i) => i % 3 === 0);
    const received = await smtp.waitFor(4);
    await waitUntil(() => relay!.workerOutcomes.length === 2 || undefined, 10_000, 'both outcomes');
    await relay.stop();
    relay = undefined;
    // Validity deletes old reports with their results: the preview must not need NetBox any more.
    netbox.reports.delete(51);
    const requestsBefore = netbox.requests.length;

    for (const route of ['on-call', 'auditors']) {
      const sent = received.find((m) => m.parsed.headers.get('x-compliance-route') === route && m.parsed.subject?.includes('report 51'))!;
      expect(sent).toBeDefined();
      const io = captureIo(env(), dir);
      expect(await runCli(['node', 'compliance-relay', 'preview', '--id', String(id), '--route', route, '--out', route], io)).toBe(0);
      const out = (name: string) => fs.readFileSync(path.join(dir, route, name), 'utf8');
      const preview = await simpleParser(fs.readFileSync(path.join(dir, route, 'mail.eml')));

      expect(out('subject.txt')).toBe(`${sent.parsed.subject}\n`);
      expect(out('mail.txt')).toBe(sent.parsed.text);
      expect(out('mail.html')).toBe(sent.parsed.html);
      expect(preview.messageId).toBe(sent.parsed.messageId);
      expect(preview.attachments.map((a) => [a.filename, a.content.toString('utf8')])).toEqual(
        sent.parsed.attachments.map((a) => [a.filename, a.content.toString('utf8')]),
      );
      // on-call attaches the CSV (attach_csv: true), auditors do not.
      expect(preview.attachments.map((a) => a.filename)).toEqual(route === 'on-call' ? ['report-51-failures.csv'] : []);
      // What the preview used to leave out: the trend against report 50 and the failing tests.
      expect(out('mail.txt')).toContain('CHANGE SINCE THE PREVIOUS REPORT');
      expect(out('mail.txt')).toContain('Compared with report 50');
      expect(out('mail.txt')).toContain('Newly failing:');
      expect(out('mail.txt')).toContain('WHAT FAILED: 4 failing results in 2 tests');
    }
    expect(netbox.requests.length).toBe(requestsBefore);

    // Without --route: the first route the delivery was mailed on, and the others are named.
    const io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--id', String(id), '--out', 'default'], io)).toBe(0);
    expect(io.out()).toContain('Route on-call (other routes: auditors; choose with --route): [on-call]');
  });
});

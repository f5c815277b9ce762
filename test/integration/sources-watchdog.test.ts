import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const HOUR = 3_600_000;
const LAB_SECRET = 'lab-watchdog-secret';

/** Issue 18: the watchdog's expected cadence is per NetBox source; one source's reports never hide another's silence. */
describe('the watchdog per NetBox source', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let dir: string;
  let now: number;

  beforeEach(async () => {
    now = Date.parse('2026-03-06T08:00:00Z');
    smtp = await startSmtpPeer();
    dir = makeTempDir('sources-watchdog-');
    fs.writeFileSync(
      path.join(dir, 'sources.yaml'),
      'sources:\n  - name: lab\n    webhook_secret_env: LAB_SECRET\n    expect_report_every: 24h\n  - name: qa\n    webhook_secret_env: LAB_SECRET\n',
    );
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', SOURCES_FILE: path.join(dir, 'sources.yaml'), LAB_SECRET },
      { clock: { now: () => now } },
    );
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const post = async (pathName: string, id: number) => {
    const body = buildBody({ data: buildReportData({ id, created: new Date(now).toISOString().replace('.000Z', '.000000Z') }) });
    const res = await postWebhook(`${relay.url}${pathName}`, body, { 'X-Hook-Signature': netboxSignature(body, LAB_SECRET) });
    expect(res.status).toBe(202);
  };
  const settle = () =>
    waitUntil(
      async () => {
        const c = (await relay.relay.store.readQueue()).counts;
        return c.queued + c.sending + c.retrying === 0;
      },
      10_000,
      'the outbox to drain',
    );

  it('mails when the source with a cadence goes silent, whatever other sources send, and names it', async () => {
    await post('/webhook/lab', 1);
    await smtp.waitFor(1);
    await settle();
    now += 12 * HOUR;
    // Reports from the default source and from another named source do not end lab's silence.
    await post('/webhook', 2);
    await post('/webhook/qa', 3);
    await smtp.waitFor(3);
    await settle();
    now += 12 * HOUR + 60_000;
    expect(await relay.relay.watchdog!.evaluate()).toBe('overdue');
    const overdue = (await smtp.waitFor(4))[3];
    expect(overdue.parsed.subject).toBe('lab: No compliance report received since 2026-03-06 08:00:00 UTC');
    expect(overdue.parsed.text).toContain('No compliance report from the NetBox source lab has reached the relay');
    expect(overdue.parsed.text).toContain('expect_report_every of lab in SOURCES_FILE');
    expect(overdue.parsed.headers.get('x-compliance-source')).toBe('lab');
    await settle();
    // Only lab is watched: the default source (no EXPECT_REPORT_EVERY) and qa (no expect_report_every) stay quiet.
    now += 48 * HOUR;
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    // A report that ends the silence is announced at once.
    await post('/webhook/lab', 4);
    const subjects = (await smtp.waitFor(6)).slice(4).map((m) => m.parsed.subject);
    expect(subjects).toContain('lab: Compliance reports are arriving again');
    expect(smtp.received.filter((m) => m.parsed.headers.get('x-compliance-watchdog'))).toHaveLength(2);
  });
});

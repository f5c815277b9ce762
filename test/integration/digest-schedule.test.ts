import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import Handlebars from 'handlebars';
import { findPackageRoot } from '../../src/shared';
import { launchChromium } from '../helpers/browser';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';

const HOUR = 3_600_000;
const ADMIN_TOKEN = 'digest-admin-token-0123456789';
const DAY = 24 * HOUR;

/** A digest route first (it must not stop the per-report route after it), then a per-report route. */
const ROUTES = `
routes:
  - name: weekly
    to: digest@example.com
    reply_to: compliance-lead@example.com
    match: { failed: { severity: overall, above: 0 } }
    digest: { schedule: "0 8 * * MON", timezone: Europe/Berlin }
  - name: every-report
    to: netops@example.com
`;

describe('a digest route on SQLite with a fake clock', () => {
  let smtp: SmtpPeer;
  let dataDir: string;
  let relay: TestRelay | undefined;
  // Wednesday 4 March 2026, 12:00 UTC (Berlin is UTC+1 until 29 March: Monday 08:00 there is 07:00 UTC).
  let now = Date.parse('2026-03-04T12:00:00Z');
  const clock = { now: () => now };

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    dataDir = makeTempDir('digest-');
    fs.writeFileSync(path.join(dataDir, 'routes.yaml'), ROUTES);
  });
  afterAll(async () => {
    await relay?.stop();
    await smtp.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, ROUTES_FILE: path.join(dataDir, 'routes.yaml'), MAIL_TIMEZONE: 'UTC', ADMIN_TOKEN },
      { clock, dataDir },
    );
    return relay;
  };
  const postReport = async (id: number, failed: number) => {
    const created = new Date(now).toISOString().replace('.000Z', '.000000Z');
    const data = buildReportData({ id, created, total_passed: 8 - failed, total_count: 8, middle_passed: 8 - failed, middle_count: 8 });
    expect((await postWebhook(relay!.webhookUrl, buildBody({ data }))).status).toBe(202);
  };
  const settle = () =>
    waitUntil(
      async () => {
        const c = (await relay!.relay.store.readQueue()).counts;
        return c.queued + c.sending + c.retrying === 0;
      },
      10_000,
      'the outbox to drain',
    );
  const digests = (): ReceivedMail[] => smtp.received.filter((m) => m.parsed.headers.get('x-compliance-digest') === 'weekly');

  it('sends one digest per period with the matching reports, none twice across a restart, and a missed one once, late', async () => {
    await start();
    // Its first start records the tick just past (2 March) without a mail.
    expect(await relay!.relay.digests.evaluate()).toEqual([]);

    now += HOUR;
    await postReport(101, 2);
    now += DAY;
    await postReport(102, 0); // nothing failed: not in the digest (its condition), but mailed by every-report
    now += DAY;
    await postReport(103, 1);
    await smtp.waitFor(3);
    await settle();
    expect(smtp.received.map((m) => m.envelope.to)).toEqual([['netops@example.com'], ['netops@example.com'], ['netops@example.com']]);

    // Monday 9 March 08:00 Berlin, plus a few seconds.
    now = Date.parse('2026-03-09T07:00:05Z');
    const [queued] = await relay!.relay.digests.evaluate();
    expect(queued).toMatchObject({
      route: 'weekly',
      periodStart: Date.parse('2026-03-02T07:00:00Z'),
      periodEnd: Date.parse('2026-03-09T07:00:00Z'),
    });
    expect(queued.late).toBe(false);
    const [digest] = await waitForDigests(1);
    expect(digest.envelope.to).toEqual(['digest@example.com']);
    expect(digest.parsed.replyTo?.text).toBe('compliance-lead@example.com');
    expect(digest.parsed.subject).toMatch(/^(First|Better|Worse|Mixed|Same): .*HIGH failing \u2014 digest weekly \u00b7 2 reports$/);
    expect(digest.parsed.text).toContain('2 reports received; latest: report 103');
    expect(digest.parsed.text).toContain('Reports: 103 (2026-03-06 14:00 CET, 87.5%), 101 (2026-03-04 14:00 CET, 75.0%)\n');
    expect(digest.parsed.text).not.toMatch(/report 102|102 \(/);
    expect(digest.parsed.text).toMatch(/Overall\s+87\.5%\s+\+12\.5 pts\s+1 failing/);
    expect(digest.parsed.html).toContain('Compliance digest weekly');
    // The period's chart: a table (no image to attach), its accessible name naming the period's reports.
    expect(digest.parsed.attachments.filter((a) => a.contentType === 'image/png')).toEqual([]);
    expect(String(digest.parsed.html)).toMatch(
      /<table class="chart" title="Pass ratio per severity over the last 2 reports \(101 to 103\)/,
    );
    await expectShownInChromium(String(digest.parsed.html));
    expect(await relay!.relay.digests.evaluate()).toEqual([]);
    await settle();

    // A restart in the same period sends nothing again.
    await relay!.stop();
    now += HOUR;
    await start();
    expect(await relay!.relay.digests.evaluate()).toEqual([]);
    now += DAY;
    await postReport(104, 3);
    await smtp.waitFor(5);
    await settle();

    // Down over Monday 16 March: the missed digest goes out once at the next start, and says it is late.
    await relay!.stop();
    now = Date.parse('2026-03-16T10:30:00Z');
    await start();
    const [late] = await waitForDigests(2).then((all) => all.slice(1));
    expect(late.parsed.subject).toMatch(/^\[late\] (First|Better|Worse|Mixed|Same): .*HIGH failing \u2014 digest weekly \u00b7 1 report$/);
    expect(late.parsed.text).toContain('This digest is late: it was due at 2026-03-16 08:00 CET');
    expect(late.parsed.text).toContain('latest: report 104');
    expect(late.parsed.text).toContain('Change measured against report 103 (before the period)');
    expect(late.parsed.headers.get('x-compliance-digest-late')).toBe('true');
    expect(await relay!.relay.digests.evaluate()).toEqual([]);
    await settle();

    // A period without a report is news too.
    now = Date.parse('2026-03-23T07:01:00Z');
    await relay!.relay.digests.evaluate();
    const quiet = (await waitForDigests(3))[2];
    expect(quiet.parsed.subject).toBe('No reports \u2014 digest weekly \u00b7 0 reports');
    expect(quiet.parsed.text).toContain('No report at all was received from the NetBox source default this period.');
    expect(quiet.parsed.attachments.filter((a) => a.contentType === 'image/png')).toEqual([]);
    await settle();

    expect(digests()).toHaveLength(3);
    expect(new Set(digests().map((m) => m.parsed.messageId)).size).toBe(3);
    expect(new Set(digests().map((m) => m.parsed.inReplyTo))).toEqual(new Set(['<compliance-thread.weekly@localhost>']));
    // The dashboard's records: each digest is a delivery with its route's mail kept.
    const periods = await relay!.relay.store.listDigestPeriods({ route: 'weekly' });
    expect(periods.filter((p) => p.deliveryId !== null)).toHaveLength(3);
    const kept = await relay!.relay.store.listSentMessages(periods[0].deliveryId!);
    expect(kept.map((m) => [m.route, m.subject])).toEqual([['weekly', quiet.parsed.subject]]);

    // The dashboard lists the digests beside the deliveries, each with its delivery (and so its mail), and the next run.
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(now).cookie}`;
    const page = await (await fetch(`${relay!.url}/ui`, { headers: { cookie } })).text();
    const section = page.slice(page.indexOf('<h2>Digests</h2>'));
    expect(section).toContain(
      '<td>weekly</td><td data-label="Schedule"><code>0 8 * * MON</code> (Europe/Berlin)</td><td data-label="Next run">2026-03-30 06:00:00 UTC</td>',
    );
    expect(section).toContain(`<a href="/ui/deliveries/${periods[0].deliveryId}">#${periods[0].deliveryId}</a> weekly`);
    expect(section).toContain('weekly (late)');
    const detail = await (await fetch(`${relay!.url}/ui/deliveries/${periods[1].deliveryId}`, { headers: { cookie } })).text();
    expect(detail).toContain('Digest weekly: 2026-03-09T07:00:00.000Z to 2026-03-16T07:00:00.000Z (late)');
    // Its mail as it was sent (the text part), and the route it went on.
    expect(detail).toContain(Handlebars.escapeExpression('This digest is late: it was due at 2026-03-16 08:00 CET'));
    expect(detail).toContain('<td>weekly</td><td>sent</td><td>digest of 2026-03-09T07:00:00.000Z to 2026-03-16T07:00:00.000Z (late)</td>');

    await relay!.stop();
    relay = undefined;

    // `preview --digest` renders a period from the stored history: the first digest, as it was sent.
    const io = {
      ...captureIo({ DATA_DIR: dataDir, ROUTES_FILE: path.join(dataDir, 'routes.yaml'), MAIL_TIMEZONE: 'UTC' }, dataDir),
      clock,
    };
    const period = '2026-03-02T07:00:00Z/2026-03-09T07:00:00Z';
    expect(await runCli(['node', 'compliance-relay', 'preview', '--digest', 'weekly', '--period', period, '--out', 'preview'], io)).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'preview', 'subject.txt'), 'utf8')).toBe(`${digest.parsed.subject}\n`);
    expect(fs.readFileSync(path.join(dataDir, 'preview', 'mail.html'), 'utf8')).toBe(digest.parsed.html);
    expect(fs.readFileSync(path.join(dataDir, 'preview', 'mail.txt'), 'utf8')).toBe(digest.parsed.text);
    expect(io.out()).toContain('Envelope: from');
    // `--period last` (the default) is the digest recorded for the latest tick (23 March), as it was sent.
    expect(await runCli(['node', 'compliance-relay', 'preview', '--digest', 'weekly', '--out', 'last'], io)).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'last', 'mail.txt'), 'utf8')).toBe(quiet.parsed.text);
    const wrong = captureIo({ DATA_DIR: dataDir, ROUTES_FILE: path.join(dataDir, 'routes.yaml') }, dataDir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--digest', 'every-report', '--out', 'x'], wrong)).toBe(64);
    expect(wrong.err()).toContain('no digest route "every-report" (digest routes: weekly)');
    const asReport = captureIo({ DATA_DIR: dataDir, ROUTES_FILE: path.join(dataDir, 'routes.yaml') }, dataDir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--last', '--route', 'weekly', '--out', 'x'], asReport)).toBe(64);
    expect(asReport.err()).toContain('route "weekly" is a digest route: preview its digest with --digest weekly');
  });

  it('warns at start when a period is longer than RETENTION_DAYS keeps its reports', async () => {
    const dir = makeTempDir('digest-retention-');
    try {
      fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
      const short = await startTestRelay({ ROUTES_FILE: path.join(dir, 'routes.yaml'), RETENTION_DAYS: '3' }, { clock, dataDir: dir });
      await short.stop();
      const warning = short.logs.map((l) => JSON.parse(l) as { msg: string; route?: string }).find((l) => l.msg.includes('RETENTION_DAYS'));
      expect(warning).toMatchObject({ route: 'weekly' });
      expect(warning!.msg).toContain('digest route weekly: its periods are longer than RETENTION_DAYS');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  async function waitForDigests(count: number): Promise<ReceivedMail[]> {
    await waitUntil(() => digests().length >= count, 10_000, `${count} digest(s)`);
    return digests();
  }
});

/**
 * The digest as a phone shows it (375 px): the chart is whole within the screen. The screenshot is kept
 * in test-output/digest/.
 */
async function expectShownInChromium(html: string): Promise<void> {
  const out = path.join(findPackageRoot(), 'test-output', 'digest');
  fs.mkdirSync(out, { recursive: true });
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 900 } })).newPage();
    await page.route('**/*', (route) =>
      route.request().url() === 'http://mail.invalid/'
        ? route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html })
        : route.abort(),
    );
    await page.goto('http://mail.invalid/', { waitUntil: 'load' });
    await page.screenshot({ path: path.join(out, 'digest-375px.png'), fullPage: true });
    const right = await page
      .locator('table.chart')
      .evaluate((el) => (el as unknown as { getBoundingClientRect(): { right: number } }).getBoundingClientRect().right);
    expect(right).toBeLessThanOrEqual(375);
  } finally {
    await browser.close();
  }
}

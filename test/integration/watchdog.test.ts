import { createSilentLogger } from '../../src/shared';
import { SqliteStore } from '../../src/store';
import { createWatchdog, type Watchdog } from '../../src/watchdog';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const HOUR = 3_600_000;

describe('EXPECT_REPORT_EVERY: the watchdog', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let replicaStore: SqliteStore | undefined;
  let now: number;
  const env = { MAIL_TO: 'netops@example.com', EXPECT_REPORT_EVERY: '24h', MAIL_TIMEZONE: 'UTC' };

  beforeEach(async () => {
    now = Date.parse('2026-03-06T08:00:00Z');
    smtp = await startSmtpPeer();
    relay = await startTestRelay({ ...env, SMTP_URL: smtp.url }, { clock: { now: () => now } });
  });
  afterEach(async () => {
    await replicaStore?.close();
    replicaStore = undefined;
    await relay.stop();
    await smtp.close();
  });

  const postReport = async (id: number) => {
    const body = buildBody({ data: buildReportData({ id, created: new Date(now).toISOString().replace('.000Z', '.000000Z') }) });
    const res = await postWebhook(relay.webhookUrl, body);
    expect(res.status).toBe(202);
  };

  /** Every record sent: the fake clock may jump only then (a jump past a lease would re-send). */
  const settle = () =>
    waitUntil(
      async () => {
        const c = (await relay.relay.store.readQueue()).counts;
        return c.queued + c.sending + c.retrying === 0;
      },
      10_000,
      'the outbox to drain',
    );

  it('mails once when reports stop, once when they resume, and stays quiet otherwise', async () => {
    now += HOUR;
    await postReport(1);
    await smtp.waitFor(1);
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    await settle();

    now += 23 * HOUR;
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    now += HOUR + 60_000;
    expect(await relay.relay.watchdog!.evaluate()).toBe('overdue');
    const [, overdue] = await smtp.waitFor(2);
    expect(overdue.parsed.subject).toBe('No compliance report received since 2026-03-06 09:00:00 UTC');
    expect(overdue.parsed.text).toContain('(1 day 1 minute ago)');
    expect(overdue.parsed.text).toContain('at least every 1 day (EXPECT_REPORT_EVERY)');
    expect(overdue.envelope.to).toEqual(['netops@example.com']);
    expect(overdue.parsed.headers.get('x-compliance-watchdog')).toBe('overdue');

    await settle();

    // Later checks, here and by a second replica's watchdog sharing the store, send nothing more.
    now += 6 * HOUR;
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    replicaStore = SqliteStore.open({ dataDir: relay.dataDir });
    const replica: Watchdog = createWatchdog({
      store: replicaStore,
      clock: { now: () => now },
      logger: createSilentLogger(),
      sources: [{ expectEveryMs: 24 * HOUR }],
    });
    expect(await replica.evaluate()).toBeUndefined();

    // A report ends the silence: its own mail, and one "arriving again".
    now += HOUR;
    await postReport(2);
    const all = await smtp.waitFor(4);
    const subjects = all.map((m) => m.parsed.subject);
    expect(subjects.filter((s) => s === 'Compliance reports are arriving again')).toHaveLength(1);
    const resumed = all.find((m) => m.parsed.subject === 'Compliance reports are arriving again')!;
    expect(resumed.parsed.text).toContain('after 1 day 7 hours without one');
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    expect(await replica.evaluate()).toBeUndefined();
    await settle();

    // The next silence is measured from the new report; whichever replica sees it first sends it.
    now += 24 * HOUR + 1;
    expect(await replica.evaluate()).toBe('overdue');
    expect(await relay.relay.watchdog!.evaluate()).toBeUndefined();
    await smtp.waitFor(5);
    await waitUntil(async () => (await relay.relay.store.readQueue()).counts.sent === 5, 10_000, 'every record sent');
    expect(smtp.received).toHaveLength(5);
  });

  it('counts the silence from its first start when no report ever came', async () => {
    now += 24 * HOUR + 1;
    expect(await relay.relay.watchdog!.evaluate()).toBe('overdue');
    const [mail] = await smtp.waitFor(1);
    expect(mail.parsed.subject).toBe('No compliance report received since 2026-03-06 08:00:00 UTC');
  });
});

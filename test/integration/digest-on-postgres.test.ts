import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';

const HOUR = 3_600_000;

const ROUTES = `
routes:
  - name: daily
    to: digest@example.com
    digest: { schedule: "0 6 * * *", timezone: UTC }
  - name: every-report
    to: netops@example.com
`;

/**
 * Issue 19, item 5: two relays on one PostgreSQL database, one fake clock. At each tick both look at the
 * schedule at once, and the period's digest is queued and mailed once; after both were down over a tick,
 * both start at once and the missed digest goes once, late.
 */
describe('a digest route on two replicas sharing PostgreSQL', () => {
  let schema: TestSchema;
  let smtp: SmtpPeer;
  let dir: string;
  let replicas: TestRelay[] = [];
  let now = Date.parse('2026-05-04T09:00:00Z');
  const clock = { now: () => now };
  let env: Record<string, string>;

  beforeAll(async () => {
    schema = await createTestSchema('digest_pg');
    smtp = await startSmtpPeer();
    dir = makeTempDir('digest-pg-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    env = { DATABASE_URL: schema.url, SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, 'routes.yaml'), MAIL_TIMEZONE: 'UTC' };
  });
  afterAll(async () => {
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await smtp.close();
    await schema.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const startBoth = async () => {
    // Started together: each start() looks at the schedule at once, as replicas booting side by side do.
    replicas = await Promise.all([
      startTestRelay(env, { clock, dataDir: path.join(dir, 'a') }),
      startTestRelay(env, { clock, dataDir: path.join(dir, 'b') }),
    ]);
  };
  const stopBoth = async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    replicas = [];
  };
  const postReport = async (replica: TestRelay, id: number, failed: number) => {
    const created = new Date(now).toISOString().replace('.000Z', '.000000Z');
    const data = buildReportData({ id, created, total_passed: 8 - failed, total_count: 8, middle_passed: 8 - failed, middle_count: 8 });
    expect((await postWebhook(replica.webhookUrl, buildBody({ data }))).status).toBe(202);
  };
  const digests = (): ReceivedMail[] => smtp.received.filter((m) => m.parsed.headers.get('x-compliance-digest') === 'daily');
  const settle = () =>
    waitUntil(
      async () => {
        const c = (await replicas[0].relay.store.readQueue()).counts;
        return c.queued + c.sending + c.retrying === 0;
      },
      15_000,
      'the outbox to drain',
    );

  test('one digest per period across replicas and a restart; a missed tick sent once, late, with its reports', async () => {
    await startBoth();
    const [a, b] = replicas;
    now += HOUR;
    await postReport(a, 201, 1);
    now += HOUR;
    await postReport(b, 202, 3);
    await smtp.waitFor(2);
    await settle();

    // The tick of 5 May 06:00: both replicas evaluate at once; one queues it.
    now = Date.parse('2026-05-05T06:00:10Z');
    const queued = (await Promise.all([a.relay.digests.evaluate(), b.relay.digests.evaluate()])).flat();
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ route: 'daily', periodEnd: Date.parse('2026-05-05T06:00:00Z'), late: false });
    await waitUntil(() => digests().length >= 1, 15_000, 'the digest');
    await settle();
    const [first] = digests();
    expect(first.parsed.subject).toMatch(/^(First|Better|Worse|Mixed|Same): .*HIGH failing \u2014 digest daily \u00b7 2 reports$/);
    expect(first.parsed.text).toContain('2 reports received; latest: report 202');
    expect(first.parsed.text).toMatch(/Overall\s+62\.5%\s+−25\.0 pts\s+3 failing/);

    // A restart of both within the period sends nothing again.
    await stopBoth();
    now += HOUR;
    await startBoth();
    expect((await Promise.all(replicas.map((r) => r.relay.digests.evaluate()))).flat()).toEqual([]);
    await postReport(replicas[1], 203, 0);
    await smtp.waitFor(4);
    await settle();

    // Both down over the tick of 6 May; they start together two hours later: one late digest.
    await stopBoth();
    now = Date.parse('2026-05-06T08:00:00Z');
    await startBoth();
    await waitUntil(() => digests().length >= 2, 15_000, 'the late digest');
    await settle();
    expect((await Promise.all(replicas.map((r) => r.relay.digests.evaluate()))).flat()).toEqual([]);
    const late = digests()[1];
    expect(late.parsed.subject).toMatch(/^\[late\] (First|Better|Worse|Mixed|Same): .*HIGH failing \u2014 digest daily \u00b7 1 report$/);
    expect(late.parsed.text).toContain('latest: report 203');
    expect(late.parsed.text).toContain('Change measured against report 202 (before the period)');
    expect(digests()).toHaveLength(2);
    const rows = await schema.query<{ n: string }>('SELECT COUNT(*) AS n FROM digest_periods WHERE delivery_id IS NOT NULL');
    expect(Number(rows.rows[0].n)).toBe(2);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir, waitUntil } from '../helpers/relay-harness';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const DELIVERIES = 500;
const SMTP_POOL_SIZE = 5;
const SECRET = 'replica-webhook-secret';

jest.setTimeout(420_000);

/** What a NetBox retry loop sees for one delivery: every answer, in order. */
interface Attempt {
  replica: number;
  status: number | 'connection-error';
}

describe('three relay processes on one PostgreSQL database', () => {
  let schema: TestSchema;
  let smtp: SmtpPeer;
  let dataDir: string;
  let replicas: RelayProcess[] = [];

  beforeAll(async () => {
    schema = await createTestSchema('replicas');
    smtp = await startSmtpPeer();
    dataDir = makeTempDir('replicas-');
  });
  afterAll(async () => {
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await smtp.close();
    await schema.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('500 deliveries round-robin with duplicates, one replica SIGKILLed midway: every report mailed, none lost, duplicates bounded', async () => {
    const env = {
      DATABASE_URL: schema.url,
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      WEBHOOK_SECRET: SECRET,
      SMTP_POOL_SIZE: String(SMTP_POOL_SIZE),
      LOG_LEVEL: 'info',
      // The queue is under test here, not the mail's look: a tiny template keeps 500 mails quick on 2 cores.
      TEMPLATES_DIR: path.resolve(__dirname, '../fixtures/templates-light'),
    };
    // Started together: the migrations run once, under the advisory lock.
    const started = await Promise.allSettled([0, 1, 2].map((i) => startRelayProcess(env, `${dataDir}/r${i}`)));
    replicas = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const r of started) if (r.status === 'rejected') throw r.reason; // afterAll stops the ones that did start
    const alive = new Set([0, 1, 2]);

    const bodies = Array.from({ length: DELIVERIES }, (_, i) => buildBody({ version: '4.6', data: buildReportData({ id: 10_000 + i }) }));

    /** Posts like NetBox behind a load balancer: on a refused connection or a 503, the next replica. */
    async function deliver(i: number, first: number): Promise<Attempt[]> {
      const attempts: Attempt[] = [];
      let replica = first;
      for (let tries = 0; tries < 10; tries += 1) {
        if (!alive.has(replica)) replica = [...alive][tries % alive.size]!;
        try {
          const res = await fetch(replicas[replica].webhookUrl, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Hook-Signature': netboxSignature(bodies[i], SECRET) },
            body: bodies[i],
          });
          await res.arrayBuffer();
          attempts.push({ replica, status: res.status });
          if (res.status === 200 || res.status === 202) return attempts;
        } catch {
          attempts.push({ replica, status: 'connection-error' });
        }
        replica = (replica + 1) % 3;
      }
      return attempts;
    }

    const startedAt = Date.now();
    const outcomes: Attempt[][] = [];
    const pairs: { i: number; a: Attempt[]; b: Attempt[] }[] = [];
    let answered = 0;
    let killed: Promise<void> | undefined;
    let next = 0;
    // 8 NetBox workers posting at once; every fifth delivery is also sent to another replica at the same moment.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < DELIVERIES) {
          const i = next++;
          const first = i % 3;
          if (i % 5 === 0) {
            const [a, b] = await Promise.all([deliver(i, first), deliver(i, (first + 1) % 3)]);
            outcomes.push(a, b);
            pairs.push({ i, a, b });
          } else {
            outcomes.push(await deliver(i, first));
          }
          answered += 1;
          if (answered === DELIVERIES / 2 && !killed) {
            alive.delete(2);
            killed = replicas[2].kill();
          }
        }
      }),
    );
    await killed;
    const postedMs = Date.now() - startedAt;
    expect(replicas[2].child.signalCode).toBe('SIGKILL');
    // The dead replica's claims come back when their 5-minute lease runs out: that time is passed here by
    // ending those leases in the database, as the clock would.
    await schema.query("UPDATE deliveries SET lease_until = 0 WHERE state = 'sending' AND lease_owner LIKE $1", [
      `relay-${replicas[2].child.pid}-%`,
    ]);

    // No false 2xx and none lost: every post ended in 202 or 200, and the queue holds each delivery once.
    for (const attempts of outcomes) expect([200, 202]).toContain(attempts[attempts.length - 1].status);
    // Two replicas given the same delivery at the same moment: one 202, one 200 duplicate (when neither hit the kill).
    const clean = pairs.filter((p) => p.a.length === 1 && p.b.length === 1);
    expect(clean.length).toBeGreaterThan(50);
    for (const p of clean) expect([p.a[0].status, p.b[0].status].sort()).toEqual([200, 202]);

    // Every report mailed: the killed replica's claims are taken over once their lease expires.
    await waitUntil(
      async () => {
        const { rows } = await schema.query<{ state: string; n: number }>(
          'SELECT state, COUNT(*)::int AS n FROM deliveries GROUP BY state',
        );
        return rows.length === 1 && rows[0].state === 'sent' && rows[0].n === DELIVERIES ? true : undefined;
      },
      240_000,
      'every delivery to be sent',
    );
    const perReport = new Map<string, number>();
    for (const mail of smtp.received) {
      const id = /\u2014 report (\d+)/.exec(String(mail.parsed.subject))?.[1] ?? 'unknown';
      perReport.set(id, (perReport.get(id) ?? 0) + 1);
    }
    // Failed sends (an SMTP answer lost to a timeout) are retried: the server may have taken the mail,
    // so each may add one duplicate. Counted from the replicas' logs, as an operator would.
    const failedSends = replicas.flatMap((r) =>
      r
        .output()
        .split('\n')
        .filter((l) => l.includes('send failed')),
    );
    // For the reader of a failed run: how long posting and mailing took on this machine.
    console.log(
      `posted in ${postedMs} ms, all mailed after ${Date.now() - startedAt} ms, ${smtp.received.length} mails, ${failedSends.length} failed sends`,
    );
    expect(perReport.size).toBe(DELIVERIES);
    expect([...perReport.keys()].every((id) => Number(id) >= 10_000 && Number(id) < 10_000 + DELIVERIES)).toBe(true);
    // The README's bound: a mail is sent twice only when its sender died between handing it to SMTP and
    // recording that (at most SMTP_POOL_SIZE per killed replica), or when an SMTP answer was lost.
    const duplicates = smtp.received.length - DELIVERIES;
    if (duplicates > SMTP_POOL_SIZE + failedSends.length) {
      const twice = [...perReport].filter(([, n]) => n > 1).map(([id]) => Number(id));
      const { rows } = await schema.query('SELECT report_id, attempts, last_error_code FROM deliveries WHERE report_id = ANY($1)', [twice]);
      console.log('mailed more than once:', JSON.stringify(rows), failedSends.slice(0, 5).join('\n'));
    }
    expect(duplicates).toBeGreaterThanOrEqual(0);
    expect(duplicates).toBeLessThanOrEqual(SMTP_POOL_SIZE + failedSends.length);

    // The work was shared: each surviving replica sent mails.
    for (const survivor of [replicas[0], replicas[1]]) expect(survivor.output()).toContain('"msg":"mail sent"');
    // Only the killed replica's claims (no more than one batch) and failed sends took a second attempt.
    const { rows: attemptsRows } = await schema.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM deliveries WHERE attempts > 1');
    expect(attemptsRows[0].n).toBeLessThanOrEqual(SMTP_POOL_SIZE + failedSends.length);
    const migrations = await schema.query<{ version: number }>('SELECT version FROM schema_migrations');
    expect(new Set(migrations.rows.map((r) => r.version)).size).toBe(migrations.rows.length);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const PROD_SECRET = 'prod-replica-secret';
const LAB_SECRET = 'lab-replica-secret';

/**
 * Issue 18, item 5: replicas share NetBox sources as they share the queue. Two relays on one PostgreSQL
 * database read the same SOURCES_FILE; whichever replica a NetBox reaches, a report is stored once per
 * (source, report), and a source's history is one history across replicas.
 */
describe('two replicas on PostgreSQL share the NetBox sources', () => {
  let schema: TestSchema;
  let smtp: SmtpPeer;
  let dir: string;
  let replicas: TestRelay[] = [];

  beforeAll(async () => {
    schema = await createTestSchema('sources_pg');
    smtp = await startSmtpPeer();
    dir = makeTempDir('sources-pg-');
    fs.writeFileSync(
      path.join(dir, 'sources.yaml'),
      'sources:\n  - name: prod\n    webhook_secret_env: PROD_SECRET\n  - name: lab\n    webhook_secret_env: LAB_SECRET\n',
    );
    const env = {
      DATABASE_URL: schema.url,
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      SOURCES_FILE: path.join(dir, 'sources.yaml'),
      PROD_SECRET,
      LAB_SECRET,
    };
    replicas = [await startTestRelay(env, { dataDir: path.join(dir, 'a') }), await startTestRelay(env, { dataDir: path.join(dir, 'b') })];
  });
  afterAll(async () => {
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await smtp.close();
    await schema.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function post(replica: TestRelay, source: string, secret: string, id: number, created: string, failed: number) {
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, total_passed: 8 - failed, middle_passed: 8 - failed }) });
    return postWebhook(`${replica.url}/webhook/${source}`, body, { 'X-Hook-Signature': netboxSignature(body, secret) });
  }

  test('report 29 of each source once, whichever replica took it; a source history spans the replicas', async () => {
    const [a, b] = replicas;
    expect((await post(a, 'lab', LAB_SECRET, 29, '2026-03-06T10:00:00Z', 1)).status).toBe(202);
    expect((await post(b, 'prod', PROD_SECRET, 29, '2026-03-06T10:00:00Z', 2)).status).toBe(202);
    // NetBox's retry of lab's delivery reaches the other replica: the same (source, report), stored once.
    const retried = await post(b, 'lab', LAB_SECRET, 29, '2026-03-06T10:00:00Z', 1);
    expect(retried.status).toBe(200);
    expect(retried.json.status).toBe('duplicate');
    await smtp.waitFor(2);
    // Recorded (the settle writes the report to the series' history with its outcome), whichever replica sent it.
    await waitUntil(
      async () => ((await a.relay.store.readQueue()).counts.sent === 2 ? true : undefined),
      10_000,
      'both reports 29 recorded',
    );
    // prod's next report, through replica a, is compared with prod's 29 (stored through replica b), not lab's.
    expect((await post(a, 'prod', PROD_SECRET, 30, '2026-03-06T11:00:00Z', 4)).status).toBe(202);
    const mails = await smtp.waitFor(3);
    const subjects = mails.map((m) => m.parsed.subject ?? '').sort();
    expect(subjects).toEqual([
      'First: 75.0%, 2 failing, no HIGH \u2014 report 29 \u00b7 prod',
      'First: 87.5%, 1 failing, no HIGH \u2014 report 29 \u00b7 lab',
      'Worse: 50.0% (\u221225.0), 4 failing, no HIGH \u2014 report 30 \u00b7 prod',
    ]);
    const { rows } = await schema.query<{ netbox_source: string; n: string }>(
      'SELECT netbox_source, COUNT(*) AS n FROM deliveries GROUP BY netbox_source ORDER BY netbox_source',
    );
    expect(rows.map((r) => [r.netbox_source, Number(r.n)])).toEqual([
      ['lab', 1],
      ['prod', 2],
    ]);
  });
});

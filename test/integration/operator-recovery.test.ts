import { buildJobDelivery } from '../../src/store';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { runCliCaptured } from '../helpers/run-cli';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'operator-webhook-secret';

const body = (res: Response): Promise<any> => res.json();
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';

/**
 * Guarantee 6 (and the dead-letter half of 5): permanent failures go dead at once with their error;
 * an operator lists them and requeues them, from the CLI or the admin API, and they are mailed.
 */
describe('operator recovery: list dead deliveries and requeue them', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let env: Record<string, string>;

  beforeEach(async () => {
    smtp = await startSmtpPeer({ behaviour: { type: 'reject', code: 550, message: 'mailbox unavailable' } });
    env = {
      SMTP_URL: smtp.url,
      MAIL_TO: 'oncall@example.com',
      WEBHOOK_SECRET: SECRET,
      ADMIN_TOKEN,
    };
    relay = await startTestRelay(env, { tune: quickRetries(20, 50) });
    env.DATA_DIR = relay.dataDir;
  });
  afterEach(async () => {
    await relay.stop();
    await smtp.close();
  });

  const post = (id: number) => {
    const body = buildBody({ data: buildReportData({ id, custom_fields: { body_marker: 'BODY-MARKER-NOT-IN-LISTINGS' } }) });
    return postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
  };
  const deadCount = async () => (await relay.relay.store.readQueue()).counts.dead;
  const api = (path: string, init: RequestInit & { token?: string | null } = {}) =>
    fetch(`${relay.url}${path}`, {
      ...init,
      headers: init.token === null ? {} : { Authorization: `Bearer ${init.token ?? ADMIN_TOKEN}` },
    });

  it('`deliveries` names a digest by its route, never as report 0', async () => {
    const periodEnd = Date.parse('2026-03-09T07:00:00Z');
    await relay.relay.store.insertDelivery(
      buildJobDelivery({
        kind: 'digest',
        job: { route: 'weekly', periodStart: periodEnd - 7 * 86_400_000, periodEnd, late: false, queuedAt: periodEnd },
      }),
    );
    const table = await runCliCaptured(['deliveries'], env);
    expect(table.code).toBe(0);
    const row = table.stdout.split('\n').find((l) => /^\d+\s+digest weekly\s/.test(l));
    expect(row).toBeDefined();
    expect(table.stdout).not.toMatch(/^\d+\s+0\s/m);
  });

  it('a 5xx is dead at once; `deliveries` shows it with its error; `retry <id>` and `retry --all-dead` send them', async () => {
    for (const id of [1, 2, 3]) expect((await post(id)).status).toBe(202);
    await waitUntil(async () => ((await deadCount()) === 3 ? true : undefined), 10_000, '3 dead');
    expect(smtp.attempts).toBe(3);

    const table = await runCliCaptured(['deliveries', '--state', 'dead'], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+REPORT\s+NETBOX\s+STATE\s+ATTEMPTS\s+NEXT ATTEMPT\s+ROUTES\s+LAST ERROR$/);
    expect(lines[1]).toContain('default: failed');
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/).slice(1, 5))).toEqual([
      ['3', '127.0.0.1', 'dead', '1'],
      ['2', '127.0.0.1', 'dead', '1'],
      ['1', '127.0.0.1', 'dead', '1'],
    ]);
    expect(table.stdout).toContain('SMTP_5XX');
    expect(table.stdout).toContain('mailbox unavailable');
    expect(table.stdout).toContain('dead: 3');
    expect(table.stdout).not.toContain('BODY-MARKER');

    const json = await runCliCaptured(['deliveries', '--json'], env);
    const listed = JSON.parse(json.stdout) as {
      deliveries: { id: number; reportId: number; state: string; lastErrorCode: string }[];
      counts: Record<string, number>;
    };
    expect(listed.deliveries.map((d) => [d.reportId, d.state, d.lastErrorCode])).toEqual([
      [3, 'dead', 'SMTP_5XX'],
      [2, 'dead', 'SMTP_5XX'],
      [1, 'dead', 'SMTP_5XX'],
    ]);
    expect(json.stdout).not.toContain('BODY-MARKER');

    expect((await runCliCaptured(['deliveries', '--state', 'lost'], env)).code).toBe(64);
    expect((await runCliCaptured(['retry'], env)).code).toBe(64);
    expect((await runCliCaptured(['retry', '999'], env)).stderr).toContain('no delivery 999');

    smtp.setBehaviour({ type: 'accept' });
    const one = await runCliCaptured(['retry', String(listed.deliveries[2].id)], env);
    expect(one).toMatchObject({ code: 0, stdout: expect.stringContaining('Requeued delivery') });
    await smtp.waitFor(1);
    expect(smtp.received[0].parsed.headers.get('x-compliance-report-id')).toBe('1');
    const all = await runCliCaptured(['retry', '--all-dead'], env);
    expect(all.stdout).toContain('Requeued 2 dead deliveries');
    await smtp.waitFor(3);
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.sent === 3 ? true : undefined), 10_000, 'all sent');
  });

  it('the admin API needs the bearer token, lists deliveries and requeues one or all dead', async () => {
    for (const id of [1, 2]) expect((await post(id)).status).toBe(202);
    await waitUntil(async () => ((await deadCount()) === 2 ? true : undefined), 10_000, '2 dead');

    const anonymous = await api('/api/deliveries', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await body(anonymous)).error.code).toBe('UNAUTHORIZED');
    expect((await api('/api/deliveries', { token: `${ADMIN_TOKEN}x` })).status).toBe(401);
    expect((await api('/api/deliveries', { token: ADMIN_TOKEN.slice(0, -1) })).status).toBe(401);

    const list = await api('/api/deliveries?state=dead&limit=1');
    expect(list.status).toBe(200);
    const page = await body(list);
    expect(page).toEqual({
      deliveries: [
        {
          id: expect.any(Number),
          kind: 'report',
          dedupKey: '2@2023-04-12T19:36:33.690567Z',
          reportId: 2,
          reportCreated: '2023-04-12T19:36:33.690567Z',
          completedAt: expect.any(String),
          source: '127.0.0.1',
          netboxSource: 'default',
          receivedVia: 'webhook',
          state: 'dead',
          attempts: 1,
          receivedAt: expect.stringMatching(/Z$/),
          nextAttemptAt: null,
          lastError: expect.stringContaining('mailbox unavailable'),
          lastErrorCode: 'SMTP_5XX',
          messageId: null,
          sentAt: null,
          updatedAt: expect.stringMatching(/Z$/),
          routes: [{ route: 'default', outcome: 'send', state: 'failed', reason: 'matched (notify: always)' }],
        },
      ],
      counts: { queued: 0, sending: 0, retrying: 0, sent: 0, dead: 2 },
      nextBefore: expect.any(Number),
    });
    const older = await body(await api(`/api/deliveries?state=dead&limit=1&before=${page.nextBefore}`));
    expect(older.deliveries.map((d: { reportId: number }) => d.reportId)).toEqual([1]);
    expect(JSON.stringify(page)).not.toContain('BODY-MARKER');

    expect((await api('/api/deliveries?state=nope')).status).toBe(400);
    expect((await api('/api/deliveries?limit=100000')).status).toBe(400);
    expect((await api('/api/deliveries/abc/retry', { method: 'POST' })).status).toBe(400);
    expect((await api('/api/deliveries/99999/retry', { method: 'POST' })).status).toBe(404);

    smtp.setBehaviour({ type: 'accept' });
    const retried = await api(`/api/deliveries/${page.deliveries[0].id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    // Requeued and due now: by the time the answer is built the worker (its poll timer runs while the
    // requeue is fsynced) may already have claimed it again.
    const requeuedNow = (await body(retried)).delivery as { reportId: number; state: string; attempts: number };
    expect(requeuedNow.reportId).toBe(2);
    expect([
      { state: 'queued', attempts: 0 },
      { state: 'sending', attempts: 1 },
    ]).toContainEqual({ state: requeuedNow.state, attempts: requeuedNow.attempts });
    await smtp.waitFor(1);
    await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'sent');
    const one = await body(await api(`/api/deliveries/${page.deliveries[0].id}`));
    expect(one.delivery).toMatchObject({ state: 'sent', messageId: expect.stringMatching(/^<report-2\./) });

    const all = await api('/api/deliveries/retry-dead', { method: 'POST' });
    expect(await body(all)).toEqual({ requeued: 1 });
    await smtp.waitFor(2);
  });

  it('without ADMIN_TOKEN the admin API does not exist (404 ADMIN_DISABLED)', async () => {
    const plain = await startTestRelay({ MAIL_TO: 'oncall@example.com' });
    try {
      const res = await fetch(`${plain.url}/api/deliveries`, { headers: { Authorization: 'Bearer anything-at-all-here' } });
      expect(res.status).toBe(404);
      expect((await body(res)).error.code).toBe('ADMIN_DISABLED');
    } finally {
      await plain.stop();
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import type { Config } from '../../src/config';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../helpers/smtp-peer';

const ROUTES = `
routes:
  - name: regressions
    match:
      regression: { drop_above: 2, newly_failing: true }
    to: lead@example.com
    subject: "Regression: {{defaultSubject}}"
    continue: true
  - name: on-call
    match:
      failed: { severity: HIGH, above: 0 }
    to: oncall@example.com
    cc: noc@example.com
    reply_to: NOC lead <noc-lead@example.com>
    notify: on-change
    continue: true
  - name: auditors
    to: auditors@example.com
    bcc: archive@example.com
`;

/** A report of 10 HIGH and 20 MIDDLE results, created on the given day of March 2026. */
function report(id: number, day: number, highPassed: number, middlePassed: number): Buffer {
  return buildBody({
    version: '4.6',
    timestamp: `2026-03-${String(day).padStart(2, '0')}T06:00:05.000000+00:00`,
    data: buildReportData({
      id,
      created: `2026-03-${String(day).padStart(2, '0')}T06:00:00.000000Z`,
      high_passed: highPassed,
      high_count: 10,
      middle_passed: middlePassed,
      middle_count: 20,
      total_passed: highPassed + middlePassed,
      total_count: 30,
    }),
  });
}

const routeOf = (m: ReceivedMail) => String(m.parsed.headers.get('x-compliance-route'));
const reportOf = (m: ReceivedMail) => Number(m.parsed.headers.get('x-compliance-report-id'));

describe('routes: the right people get the right mails', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay;
  let dir: string;

  beforeEach(async () => {
    dir = makeTempDir('relay-routes-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(extra: Record<string, string> = {}, tune?: (config: Config) => Config) {
    relay = await startTestRelay(
      {
        ADMIN_TOKEN: 'admin-token-for-the-routes-test',
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Compliance <relay@example.com>',
        ROUTES_FILE: path.join(dir, 'routes.yaml'),
        NETBOX_URL: 'https://netbox.example.com',
        ...extra,
      },
      { dataDir: path.join(dir, 'data'), tune },
    );
  }

  /** Posts a report and waits until the worker has finished with it (sent or suppressed). */
  async function deliver(body: Buffer): Promise<number> {
    const before = relay.workerOutcomes.filter((o) => o.settled?.state === 'sent').length;
    const res = await postWebhook(relay.webhookUrl, body);
    expect(res.status).toBe(202);
    await waitUntil(
      () => relay.workerOutcomes.filter((o) => o.settled?.state === 'sent').length > before,
      10_000,
      'the delivery to be processed',
    );
    return res.json.id as number;
  }

  it('four reports: on-call on change only, auditors always, regressions with continue; cc/bcc in the envelope only; one thread per route', async () => {
    await start();
    const r1 = await deliver(report(101, 1, 8, 20)); // 2 HIGH failing: first report
    const r2 = await deliver(report(102, 2, 8, 20)); // unchanged
    const r3 = await deliver(report(103, 3, 7, 18)); // worse: 93.3% → 83.3%, more failing
    const r4 = await deliver(report(104, 4, 10, 20)); // everything passes
    await new Promise((r) => setTimeout(r, 200));

    expect(smtp.received.map((m) => `${reportOf(m)} ${routeOf(m)}`)).toEqual([
      '101 on-call',
      '101 auditors',
      '102 auditors',
      '103 regressions',
      '103 on-call',
      '103 auditors',
      '104 auditors',
    ]);

    // cc and bcc are real envelope recipients; bcc never shows in the headers a recipient sees.
    const onCall = smtp.received.find((m) => routeOf(m) === 'on-call')!;
    expect(onCall.envelope.to.sort()).toEqual(['noc@example.com', 'oncall@example.com']);
    expect(onCall.parsed.headers.get('cc')).toMatchObject({ text: 'noc@example.com' });
    // A route's reply_to is its mails' Reply-To; a route without one sends none (answers go to MAIL_FROM).
    expect(onCall.parsed.replyTo?.value).toEqual([{ name: 'NOC lead', address: 'noc-lead@example.com' }]);
    const auditors = smtp.received.filter((m) => routeOf(m) === 'auditors');
    for (const m of auditors) {
      expect(m.parsed.headers.has('reply-to')).toBe(false);
      expect(m.envelope.to.sort()).toEqual(['archive@example.com', 'auditors@example.com']);
      expect(m.raw.toString('latin1')).not.toMatch(/archive@example\.com/);
      expect(m.parsed.headers.has('bcc')).toBe(false);
    }

    // The regression route has its own subject; filters see the report's figures.
    const regression = smtp.received.find((m) => routeOf(m) === 'regressions')!;
    expect(regression.parsed.subject).toBe(
      'Regression: Worse: 83.3% (\u221210.0), 3 HIGH failing \u2014 report 103 \u00b7 netbox.example.com',
    );
    expect(regression.parsed.headers.get('x-compliance-pass-percent')).toBe('83.3');
    expect(regression.parsed.headers.get('x-compliance-high-failed')).toBe('3');

    // Message-IDs are distinct per (delivery, route); every mail of a route replies to that route's thread root.
    const ids = smtp.received.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of auditors) {
      expect(m.parsed.inReplyTo).toBe('<compliance-thread.auditors@example.com>');
      expect(m.parsed.references).toBe('<compliance-thread.auditors@example.com>');
    }
    expect(onCall.parsed.inReplyTo).toBe('<compliance-thread.on-call@example.com>');

    // Every decision is recorded with its reason: the suppressed on-call mail of report 102 says why.
    const records = await relay.relay.store.listRouteMails([r1, r2, r3, r4]);
    const of = (id: number, route: string) => records.find((r) => r.deliveryId === id && r.route === route)!;
    expect(of(r2, 'on-call')).toMatchObject({
      outcome: 'suppressed',
      state: 'suppressed',
      reason: expect.stringContaining('same failed counts per severity as report 101'),
    });
    expect(of(r4, 'on-call')).toMatchObject({ outcome: 'skipped', reason: 'not matched' });
    expect(of(r3, 'regressions')).toMatchObject({
      state: 'sent',
      messageId: regression.parsed.messageId,
      response: expect.stringMatching(/^250/),
    });
    expect((await relay.relay.store.getDelivery(r2))!.state).toBe('sent');

    // The dashboard's delivery page shows each route's decision, the suppressed one with its reason.
    const login = await fetch(`${relay.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'token=admin-token-for-the-routes-test',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const page = await (await fetch(`${relay.url}/ui/deliveries/${r2}`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain('<h2>Routes</h2>');
    expect(page).toMatch(/<td>on-call<\/td><td>suppressed<\/td><td>same failed counts per severity as report 101/);
    expect(page).toMatch(/<td>regressions<\/td><td>skipped<\/td><td>not matched<\/td>/);

    // The deliveries listing (admin API, same shape as `deliveries --json`) shows the suppression and why.
    const listed = (await (
      await fetch(`${relay.url}/api/deliveries`, { headers: { Authorization: 'Bearer admin-token-for-the-routes-test' } })
    ).json()) as { deliveries: { id: number; routes: unknown[] }[] };
    const d2 = listed.deliveries.find((d) => d.id === r2)!;
    expect(d2.routes).toEqual(
      expect.arrayContaining([
        {
          route: 'on-call',
          outcome: 'suppressed',
          state: 'suppressed',
          reason: expect.stringContaining('same failed counts per severity as report 101'),
        },
        { route: 'auditors', outcome: 'send', state: 'sent', reason: expect.any(String) },
      ]),
    );
  });

  it('a transient failure of one route retries only that route: the others are never sent twice, even after a restart', async () => {
    await start({}, quickRetries(50, 100));
    // The second DATA of the run (auditors, after on-call) is refused with 451 once.
    smtp.setBehaviour((attempt) => (attempt === 2 ? { type: 'reject', code: 451, message: 'try again later' } : { type: 'accept' }));
    const id = await deliver(report(201, 5, 8, 20));
    expect(relay.workerOutcomes.map((o) => o.settled?.state)).toEqual(['retrying', 'sent']);
    expect(smtp.received.map(routeOf)).toEqual(['on-call', 'auditors']);

    // The same data dir after a restart: the delivery is requeued by hand (an operator), nothing is resent
    // for the routes already sent.
    await relay.stop();
    await start();
    const records = await relay.relay.store.listRouteMails([id]);
    expect(records.filter((r) => r.state === 'sent').map((r) => r.route)).toEqual(['on-call', 'auditors']);
    expect(await relay.relay.store.requeue(Date.now(), id)).toBe(1);
    relay.relay.worker.kick();
    await waitUntil(
      async () => ((await relay.relay.store.getDelivery(id))!.state === 'sent' ? true : undefined),
      10_000,
      'requeued delivery to finish',
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.received).toHaveLength(2);
  });
  it("NetBox 4.7's select custom fields ({value, label}) are accepted, kept as sent, and routes match them by value", async () => {
    fs.writeFileSync(
      path.join(dir, 'routes.yaml'),
      [
        'routes:',
        '  - name: east',
        '    match: { custom_field: { name: site_group, equals: dc-east } }',
        '    to: east@example.com',
        '    continue: true',
        '  - name: gold',
        '    match: { custom_field: { name: tier, in: [silver, gold] } }',
        '    to: gold@example.com',
        '    continue: true',
        '  - name: by-label',
        '    match: { custom_field: { name: site_group, equals: DC East } }',
        '    to: label@example.com',
        '    continue: true',
        '  - name: everyone',
        '    to: all@example.com',
        '',
      ].join('\n'),
    );
    await start();
    const customFields = { site_group: { value: 'dc-east', label: 'DC East' }, tier: [{ value: 'gold', label: 'Gold' }], owner: 'netops' };
    const body = buildBody({ version: '4.7', data: buildReportData({ id: 47, custom_fields: customFields }) });
    // NetBox's own bytes: the select field as an object, in the report and in its snapshot.
    expect(body.toString('utf8').split('"site_group": {"value": "dc-east", "label": "DC East"}')).toHaveLength(3);
    const id = await deliver(body);
    expect(smtp.received.map(routeOf).sort()).toEqual(['east', 'everyone', 'gold']);
    expect((await relay.relay.store.getDelivery(id))?.report?.custom_fields).toEqual(customFields);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { startChildRelay, type ChildRelay } from '../helpers/child-relay';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { OWNER_ROUTES, stockOwnerNetwork } from '../helpers/owner-network';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const CREATED = '2026-03-06T15:11:18.123456Z';
const REPORT_ID = 905;
/** Owners of the report: two slices of 100 route mails and a part of a third. */
const OWNERS = 250;
/** The route mails of a slice (ROUTE_MAILS_PER_SLICE): what is sent before the first record is written. */
const SLICE = 100;

/**
 * Guarantee 1 for a delivery of many route mails (an owner route): its mails are recorded a slice at a time,
 * so a relay SIGKILLed in the middle mails again only what it had not recorded.
 */
describe('a delivery with more route mails than one slice', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let child: ChildRelay | undefined;
  let results: ResultSpec[];

  beforeAll(async () => {
    dir = makeTempDir('relay-slices-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), OWNER_ROUTES);
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
    results = stockOwnerNetwork(netbox, OWNERS);
  });
  afterAll(async () => {
    await child?.kill('SIGKILL');
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('killed in the middle, keeps the first slice recorded as sent: the restart mails only the rest, each owner once', async () => {
    const env = {
      DATA_DIR: path.join(dir, 'data'),
      SMTP_URL: smtp.url,
      ROUTES_FILE: path.join(dir, 'routes.yaml'),
      NETBOX_URL: netbox.url,
      NETBOX_TOKEN: TOKEN,
    };
    netbox.reports.set(REPORT_ID, { id: REPORT_ID, created: CREATED, results });
    // The first slice is accepted; the second's first mail never gets its "250 OK": the relay dies waiting for it.
    smtp.setBehaviour((attempt) => (attempt <= SLICE ? { type: 'accept' } : { type: 'accept', after: new Promise(() => undefined) }));
    child = await startChildRelay(env, { cwd: dir });
    const first = child;
    const body = buildBody({ version: '4.6', data: buildReportData({ id: REPORT_ID, created: CREATED, ...countResults(results) }) });
    expect((await postWebhook(`${first.url}/webhook`, body)).status).toBe(202);
    // The second slice is built only once the first is recorded: its first mail in flight says the record is written.
    await waitUntil(() => smtp.attempts > SLICE || undefined, 120_000, 'the second slice to be sent');
    first.proc.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(smtp.received).toHaveLength(SLICE);

    smtp.setBehaviour({ type: 'accept' });
    child = await startChildRelay(env, { cwd: dir });
    const owners = () => new Set(smtp.received.map((m) => m.envelope.to.join()));
    // One delivery, its mails in plan order: had the restart mailed the first slice again, it would have done so
    // before the last owner's mail.
    await waitUntil(() => owners().size === OWNERS || undefined, 120_000, `all ${OWNERS} owners mailed`);
    expect(smtp.received).toHaveLength(OWNERS);
    expect(child.output.some((l) => l.includes('resuming deliveries that were being sent'))).toBe(true);
  }, 300_000);

  it('a server that asks to slow down in the second slice: the rest waits with the queue, then each owner is mailed once', async () => {
    const dataDir = path.join(dir, 'throttled');
    const refusals: { at: number; waitMs: number }[] = [];
    const attempts: number[] = [];
    smtp.setBehaviour(() => {
      attempts.push(Date.now());
      if (attempts.length !== SLICE + 20) return { type: 'accept' };
      refusals.push({ at: Date.now(), waitMs: 2_000 });
      return { type: 'reject', code: 450, message: '4.7.1 Rate limit exceeded for relay@example.com, try again in 2 seconds' };
    });
    const received = smtp.received.length;
    let relay: TestRelay | undefined;
    try {
      relay = await startTestRelay(
        { SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, 'routes.yaml'), NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN },
        { dataDir },
      );
      const id = REPORT_ID + 1;
      netbox.reports.set(id, { id, created: CREATED, results });
      const body = buildBody({ version: '4.6', data: buildReportData({ id, created: CREATED, ...countResults(results) }) });
      expect((await postWebhook(relay.webhookUrl, body)).status).toBe(202);
      const r = relay;
      await waitUntil(() => r.workerOutcomes.some((o) => o.settled?.state === 'sent') || undefined, 60_000, 'the delivery sent');

      const mails = smtp.received.slice(received);
      expect(mails).toHaveLength(OWNERS);
      expect(new Set(mails.map((m) => m.envelope.to.join())).size).toBe(OWNERS);
      // Nothing was tried before the time the server gave; the delivery was retried for then, with what it had left.
      expect(refusals).toHaveLength(1);
      expect(attempts.find((t) => t > refusals[0].at)).toBeGreaterThanOrEqual(refusals[0].at + refusals[0].waitMs);
      expect(relay.workerOutcomes.map((o) => o.settled?.state)).toEqual(['retrying', 'sent']);
      const sent = relay.workerOutcomes[1];
      expect(sent.mails.filter((m) => m.row?.state === 'sent')).toHaveLength(OWNERS - SLICE - 19);
      expect((await relay.relay.store.listRouteMails([sent.delivery.id])).filter((m) => m.state === 'sent')).toHaveLength(OWNERS);
    } finally {
      await relay?.stop();
    }
  }, 120_000);
});

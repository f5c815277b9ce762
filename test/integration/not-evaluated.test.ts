import type { ParsedMail } from 'mailparser';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import type { Config } from '../../src/config';
import { postWebhook, quickNetbox, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const SECRET = 'n3tb0x-webhook-s3cret';
const NTP = { id: 1, name: 'ntp-servers', severity: 'HIGH' as const };
const SNMP = { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const };
type TestSpec = ResultSpec['test'];

/**
 * What validity writes: one result per (device, test) it evaluated, none for a device it skipped or a
 * test deleted. The relay must tell "passed now" from "not evaluated now" from NetBox's results.
 */
describe('a pair without a result in a report is not evaluated, never fixed', () => {
  let smtp: SmtpPeer;
  let netbox: NetboxDouble;
  let relay: TestRelay | undefined;
  let nextResultId = 1000;
  beforeEach(async () => {
    smtp = await startSmtpPeer();
    netbox = await startNetboxDouble({ authorization: `Token ${TOKEN}` });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await netbox.close();
    await smtp.close();
  });

  /** Results of `devices` (sw<n>, id 100+n) × `tests`, failing where `fails` says. */
  function grid(devices: number[], tests: TestSpec[], fails: (device: number, test: TestSpec) => boolean): ResultSpec[] {
    return devices.flatMap((n) =>
      tests.map((test) => ({ id: nextResultId++, test, device: { id: 100 + n, name: `sw${n}` }, passed: !fails(n, test) })),
    );
  }

  /** Posts report `id` (NetBox holding `results` for it) and returns its mail. */
  async function mailOf(r: TestRelay, id: number, results: ResultSpec[], mailsSoFar: number): Promise<ParsedMail> {
    const created = `2026-03-0${id}T06:00:00.000000Z`;
    netbox.reports.set(id, { id, created, results });
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
    const res = await postWebhook(r.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
    return (await smtp.waitFor(mailsSoFar + 1))[mailsSoFar].parsed;
  }

  async function start(tune?: (config: Config) => Config): Promise<TestRelay> {
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'netops@example.com', WEBHOOK_SECRET: SECRET, NETBOX_URL: netbox.url, NETBOX_TOKEN: TOKEN },
      { tune },
    );
    return relay;
  }

  const occurrences = (text: string, word: string) => text.split(word).length - 1;

  it('a device that dropped out is named once as not evaluated, is not "fixed", and leaves the verdict unmoved', async () => {
    const r = await start();
    // sw3 fails both tests in report 1; report 2 has no result for sw3 at all (validity skipped it).
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4, 5], [NTP, SNMP], (n, t) => n === 3 || (n === 1 && t === NTP)),
      0,
    );
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 4, 5], [NTP, SNMP], (n, t) => n === 1 && t === NTP),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain('Not evaluated this time: sw3 (2 tests) \u2014 no results in this report.');
    expect(text).not.toContain('Fixed since report 1');
    expect(occurrences(text, 'sw3')).toBe(1);
    expect(String(mail.html)).toContain('Not evaluated this time: sw3 (2 tests) \u2014 no results in this report.');
    // Nothing evaluated in both reports changed: HIGH 3 of 4 and MIDDLE 4 of 4 over the devices evaluated twice.
    expect(mail.headers.get('x-compliance-verdict')).toBe('same');
    // The two tests were asked about together: sw3 is their only changed device.
    const asked = netbox.requests.filter((q) => q.path.includes('passed=true'));
    expect(asked.map((q) => new URL(q.path, 'http://x').searchParams.getAll('test_id'))).toEqual([['1', '2']]);
    expect(asked.map((q) => new URL(q.path, 'http://x').searchParams.getAll('device_id'))).toEqual([['103']]);
  });

  it('a pair NetBox shows passed is fixed', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3], [NTP], (n) => n !== 1),
      0,
    );
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 3], [NTP], (n) => n === 3),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain('Fixed since report 1:\n  - [HIGH] ntp-servers: sw2');
    expect(text).not.toContain('Not evaluated');
    expect(mail.headers.get('x-compliance-verdict')).toBe('better');
  });

  it('a device deleted from NetBox among devices that pass now: the others are fixed, it is not evaluated', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4, 5, 6], [NTP], () => true),
      0,
    );
    // Deleting sw6 deletes its results: NetBox refuses a request naming its id, whatever else it asks.
    const first = netbox.reports.get(1)!;
    netbox.reports.set(1, { ...first, results: first.results.filter((x) => x.device.id !== 106) });
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 3, 4, 5], [NTP], () => false),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain('Fixed since report 1:\n  - [HIGH] ntp-servers: sw1, sw2, sw3 and 2 more');
    expect(text).toContain('Not evaluated this time: sw6 (deleted from NetBox; ntp-servers) \u2014 no results in this report.');
    expect(mail.headers.get('x-compliance-verdict')).toBe('better');
  });

  it('a test deleted from NetBox (its results with it) is named once, under the test, and none of its pairs is fixed', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4], [NTP, SNMP], (n, t) => t === SNMP || n === 1),
      0,
    );
    // validity deletes a test's results with the test, in every report: NetBox refuses its id since.
    const first = netbox.reports.get(1)!;
    netbox.reports.set(1, { ...first, results: first.results.filter((x) => x.test.id !== SNMP.id) });
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 3, 4], [NTP], (n) => n === 1),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain(
      'Not evaluated this time: test snmp-community (deleted from NetBox; 4 devices) \u2014 no results in this report.',
    );
    expect(text).not.toContain('Fixed since report 1');
    expect(occurrences(text, 'snmp-community')).toBe(1);
    expect(mail.headers.get('x-compliance-verdict')).toBe('same');
  });

  it('a device added says it has no result in the previous report, not that it newly fails', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3], [NTP], (n) => n === 1),
      0,
    );
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 3, 4], [NTP], (n) => n === 1 || n === 4),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain('No results in report 1 (new since, or not evaluated there): sw4 (ntp-servers).');
    expect(text).not.toContain('Newly failing');
    // Its failure is listed with what the relay knows of it.
    expect(text).toMatch(/no result in report 1:\n\s+sw4 /);
    expect(text).not.toMatch(/\bnew:\n\s+sw4 /);
  });

  it('after a report without sw3, sw3 failing again is not "newly failing": report 2 has no result for it', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3], [NTP], (n) => n === 3),
      0,
    );
    const second = await mailOf(
      r,
      2,
      grid([1, 2], [NTP], () => false),
      1,
    );
    expect(String(second.text)).toContain('Not evaluated this time: sw3 (ntp-servers)');
    const third = await mailOf(
      r,
      3,
      grid([1, 2, 3], [NTP], (n) => n === 3),
      2,
    );
    const text = String(third.text);
    expect(text).toContain('No results in report 2 (new since, or not evaluated there): sw3 (ntp-servers).');
    expect(text).not.toContain('Newly failing');
  });

  it('when NetBox cannot answer within the budget, the mail says fixed and not evaluated could not be told apart, and lists neither', async () => {
    const r = await start(quickNetbox(1500));
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4], [NTP], (n) => n === 2 || n === 3),
      0,
    );
    netbox.slowQueries.set('passed=true', 10_000);
    // sw2 passes now and sw3 has no result: NetBox is too slow to tell which is which.
    const mail = await mailOf(
      r,
      2,
      grid([1, 2, 4], [NTP], () => false),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain(
      '2 results that failed in report 1 do not fail now: fixed and not evaluated could not be told apart this time, so neither is listed (NetBox did not answer within the 1.5 s allowed).',
    );
    expect(text).not.toContain('Fixed since report 1');
    expect(text).not.toContain('Not evaluated this time');
    // Neither counts as fixed: over what was evaluated in both, nothing changed.
    expect(mail.headers.get('x-compliance-verdict')).toBe('same');
  });
  /** Report `id` posted with `results`' counts, NetBox then holding the report without a single result. */
  async function mailOfRemoved(r: TestRelay, id: number, results: ResultSpec[], mailsSoFar: number): Promise<ParsedMail> {
    const created = `2026-03-0${id}T06:00:00.000000Z`;
    // validity fired the webhook, then a later step of the run raised: its error callback deleted the run's results.
    netbox.reports.set(id, { id, created, results: [], fields: countResults(results) });
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, ...countResults(results) }) });
    const res = await postWebhook(r.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
    return (await smtp.waitFor(mailsSoFar + 1))[mailsSoFar].parsed;
  }

  it('a report whose results validity removed after its webhook says so in one line: nothing fixed, no device not evaluated', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4], [NTP, SNMP], (n) => n === 3),
      0,
    );
    // The counts say sw1 and sw2 fail ntp-servers now; NetBox lists no result at all for report 2.
    const mail = await mailOfRemoved(
      r,
      2,
      grid([1, 2, 3, 4], [NTP, SNMP], (n, t) => n < 3 && t === NTP),
      1,
    );
    const text = String(mail.text);
    const line = "validity removed this run's results from NetBox after sending its webhook";
    expect(occurrences(text, line)).toBe(1);
    expect(text).toContain(
      `Failing tests are not listed: ${line} (the run failed after writing report 2); the counts above are the webhook's.`,
    );
    expect(text).not.toMatch(/not evaluated/i);
    expect(text).not.toMatch(/fixed/i);
    expect(text).not.toContain('WHAT FAILED');
    expect(occurrences(String(mail.html), 'results from NetBox after sending its webhook')).toBe(1);
  });

  it('an all-passing report whose results validity removed: the failures of the previous report are neither fixed nor not evaluated', async () => {
    const r = await start();
    await mailOf(
      r,
      1,
      grid([1, 2, 3, 4], [NTP, SNMP], (n) => n === 3),
      0,
    );
    const mail = await mailOfRemoved(
      r,
      2,
      grid([1, 2, 3, 4], [NTP, SNMP], () => false),
      1,
    );
    const text = String(mail.text);
    expect(text).toContain(
      "2 results that failed in report 1 do not fail now: fixed and not evaluated could not be told apart this time, so neither is listed (validity removed this run's results from NetBox after sending its webhook).",
    );
    expect(text).not.toContain('Not evaluated this time');
    expect(text).not.toContain('Fixed since report 1');
    expect(mail.headers.get('x-compliance-verdict')).toBe('same');
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { createReportComposer, createReportInsights } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { createNetboxClient, type NetboxClient } from '../../src/netbox';
import { SqliteStore, type DeliveryRecord } from '../../src/store';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { buildResults, countResults, startNetboxDouble, type NetboxDouble, type ResultSpec } from '../helpers/validity-results-double';
import { simpleParser, type Attachment } from 'mailparser';
import type { OutgoingMail } from '../../src/mail';
import { buildDefaultRoute, DEFAULT_ROUTE_NAME } from '../../src/routing';
import { reportHistoryOf } from '../helpers/store-writes';

const TOKEN = 'nbt_relayRO01.k7Hq2mZ9xW4vB8nR3tY6uJ1oP5sA0dF';
const GOLDEN_DIR = path.join(__dirname, '..', 'fixtures', 'golden', 'enrichment');
const TESTS = [
  { id: 1, name: 'ntp-servers', severity: 'HIGH' as const },
  { id: 5, name: 'aaa-servers', severity: 'HIGH' as const },
  { id: 2, name: 'snmp-community', severity: 'MIDDLE' as const },
  { id: 4, name: 'login-banner', severity: 'LOW' as const },
  { id: 6, name: 'syslog-servers', severity: 'MIDDLE' as const },
];

/**
 * Compares a rendered part with its golden file (the port of the NetBox double replaced by a fixed
 * host). `UPDATE_GOLDEN=1 npx jest test/unit/enriched-mail.test.ts` rewrites them after a deliberate change.
 */
function expectGolden(name: string, actual: string, netboxUrl: string): void {
  // The host alone names the instance in the header (issue 17).
  const normalized = actual
    .split(netboxUrl)
    .join('https://netbox.example.com/netbox')
    .split(new URL(netboxUrl).host)
    .join('netbox.example.com')
    // The kicker writes the host with break points ({{breakable}}).
    .split(new URL(netboxUrl).host.replace(/([.:])/g, '$1<wbr>'))
    .join('netbox.<wbr>example.<wbr>com');
  const file = path.join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    fs.mkdirSync(GOLDEN_DIR, { recursive: true });
    fs.writeFileSync(file, normalized);
  }
  expect(normalized).toBe(fs.readFileSync(file, 'utf8'));
}

describe('the mail names what failed and what changed (golden renders)', () => {
  let netbox: NetboxDouble;
  let client: NetboxClient;
  let dir: string;
  let store: SqliteStore;
  const renderer = loadRenderer(defaultTemplatesDir());

  beforeEach(async () => {
    netbox = await startNetboxDouble({ authorization: `Bearer ${TOKEN}`, basePath: '/netbox', publicOrigin: 'https://netbox.example.com' });
    client = createNetboxClient({ url: netbox.url, token: TOKEN, timeoutMs: 5000, retryBaseMs: 10 });
    dir = makeTempDir('enriched-mail-');
    store = SqliteStore.open({ dataDir: dir });
  });
  afterEach(async () => {
    client.close();
    await netbox.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function composer(
    overrides: {
      client?: NetboxClient;
      budgetMs?: number;
      attachCsv?: boolean;
      routeAttachCsv?: boolean;
      attachMaxBytes?: number;
    } = {},
  ) {
    const insights = createReportInsights({
      client: 'client' in overrides ? overrides.client : client,
      netboxUrl: netbox.url,
      budgetMs: overrides.budgetMs ?? 5000,
      history: reportHistoryOf(store),
    });
    const composer = createReportComposer({
      renderer,
      clock: { now: () => Date.parse('2026-03-06T15:12:00Z') },
      mail: { from: 'Compliance <relay@example.com>', timezone: 'Europe/Berlin' },
      routes: [
        {
          ...buildDefaultRoute({ to: ['netops@example.com'], cc: [], bcc: [] }),
          attach_csv: overrides.routeAttachCsv ?? overrides.attachCsv,
          // The golden renders are of the sections below the bars; the trend chart has its own tests (mail-chart).
          chart: false,
        },
      ],
      implicitRoute: true,
      netboxUrl: netbox.url,
      maxFailures: 3,
      attachMaxBytes: overrides.attachMaxBytes ?? 1_000_000,
      insights,
    });
    // The mail of one route to netops (with attach_csv when the CSV is asked for), its attachments as a mail client reads them.
    return async (delivery: DeliveryRecord): Promise<OutgoingMail & { attachments: Attachment[] }> => {
      const mail = (await composer.render(await composer.compose(delivery), {
        route: DEFAULT_ROUTE_NAME,
        reminder: false,
        reason: 'test',
      }))!;
      return { ...mail, attachments: (await simpleParser(mail.raw)).attachments };
    };
  }

  /** Publishes a report on the double and returns the delivery NetBox would have sent for it. */
  function report(id: number, created: string, results: ResultSpec[], publish = true): DeliveryRecord {
    if (publish) netbox.reports.set(id, { id, created, results });
    const body = buildBody({ version: '4.6', data: buildReportData({ id, created, basePath: '/netbox', ...countResults(results) }) });
    const parsed = parseDelivery(body);
    if (parsed.kind !== 'report') throw new Error('not a report');
    return { id, reportId: id, dedupKey: parsed.dedupKey, body, attempts: 1 } as DeliveryRecord;
  }

  // 40 results, one per device, plus sw-003 failing two more tests (so it leads "devices with most failures").
  const failing = (fails: (i: number) => boolean): ResultSpec[] => [
    ...buildResults(40, { fails, tests: TESTS }),
    { id: 2000, test: TESTS[0], device: { id: 103, name: 'sw-003' }, passed: false },
    { id: 2001, test: TESTS[2], device: { id: 103, name: 'sw-003' }, passed: false },
  ];

  it('lists failing tests HIGH first with linked devices, caps, top devices, and the trend over three reports', async () => {
    const compose = composer({ attachCsv: true });
    // Report 41: every third result fails. 42: sw-000 fixed. 43: sw-001 newly fails.
    const first = await compose(
      report(
        41,
        '2026-03-04T15:00:00.000000Z',
        failing((i) => i % 3 === 0),
      ),
    );
    expect(String(first.text)).toContain(
      'This is the first report the relay has seen from this NetBox: there is nothing to compare with yet.',
    );
    await compose(
      report(
        42,
        '2026-03-05T15:00:00.000000Z',
        failing((i) => i % 3 === 0 && i !== 0),
      ),
    );
    const mail = await compose(
      report(
        43,
        '2026-03-06T15:00:00.000000Z',
        failing((i) => (i % 3 === 0 && i !== 0) || i === 1),
      ),
    );
    const text = String(mail.text);
    expect(text).toContain('WHAT FAILED: 16 failing results in 5 tests');
    // Issue 17: the verdict first, then what newly fails, then what still fails, each grouped per test.
    expect(text.split('\n').slice(0, 3)).toEqual([
      `${new URL(netbox.url).host}: Compliance report 43 (report-43): 61.9% passed`,
      '!! 7 HIGH-severity results failed, and 9 of lower severity.',
      'Worse than report 42: 61.9% passed, was 64.3% (\u22122.4 pts, +1 failing); HIGH 58.8%, was 64.7%, 1 newly failing.',
    ]);
    // What newly fails, by test, on the first screen; then each failing result once, tagged new or with its streak.
    expect(text).toContain('Newly failing: [HIGH] aaa-servers (1 device)\n');
    expect(text).toContain(
      '  * aaa-servers [HIGH]: fails on 4 devices, 1 new\n    new:\n      sw-001  ' +
        `${netbox.url}/plugins/validity/test-results/1001/\n    failing since report 41 (3 in a row):\n      sw-006  `,
    );
    expect(text).not.toContain('Still failing');
    expect(text.indexOf('Newly failing:')).toBeLessThan(text.indexOf('WHAT FAILED'));
    expect(String(mail.subject)).toBe(`Worse: 61.9% (\u22122.4), 7 HIGH failing \u2014 report 43 \u00b7 ${new URL(netbox.url).host}`);
    expect(text).toContain('...and 2 more failing tests');
    expectGolden('enriched.txt', text, netbox.url);
    expectGolden('enriched.html', String(mail.html), netbox.url);
    // The CSV: every failing result, RFC 4180, result pages absolute on NETBOX_URL.
    const [csv] = mail.attachments;
    expect(csv.filename).toBe('report-43-failures.csv');
    const lines = csv.content.toString('utf8').split('\r\n');
    expect(lines[0]).toBe('device,test,severity,result_url');
    expect(lines).toHaveLength(1 + 16 + 1);
    expect(lines).toContain(`sw-001,aaa-servers,HIGH,${netbox.url}/plugins/validity/test-results/1001/`);
  });

  it('caps the CSV and says so in the mail', async () => {
    const mail = await composer({ attachCsv: true, attachMaxBytes: 400 })(
      report(
        44,
        '2026-03-06T15:00:00Z',
        failing((i) => i % 3 === 0),
      ),
    );
    const [csv] = mail.attachments;
    expect(csv.content.length).toBeLessThanOrEqual(400);
    const rows = csv.content.toString('utf8').split('\r\n').length - 2;
    expect(String(mail.text)).toContain(
      `The attached report-44-failures.csv lists the first ${rows} of 16 failing results: it is capped at 400 bytes.`,
    );
    expect(String(mail.html)).toContain(`lists the first ${rows} of 16 failing results`);
    // Another route of the same relay without attach_csv: neither the file nor the note about it.
    const other = await composer({ attachCsv: true, routeAttachCsv: false, attachMaxBytes: 400 })(
      report(
        45,
        '2026-03-06T16:00:00Z',
        failing((i) => i % 3 === 0),
      ),
    );
    expect(other.attachments).toEqual([]);
    expect(String(other.text)).toContain('WHAT FAILED: 16 failing results');
    expect(String(other.text)).not.toContain('attached');
    expect(String(other.html)).not.toContain('attached');
  });

  const degraded: [string, () => Promise<{ text: string; html: string }>][] = [
    [
      'no-token',
      async () =>
        render(
          composer({ client: createNetboxClient({ url: netbox.url, timeoutMs: 2000 }) }),
          report(
            50,
            '2026-03-06T15:00:00Z',
            failing((i) => i % 3 === 0),
          ),
        ),
    ],
    [
      'token-refused',
      async () =>
        render(
          composer({ client: createNetboxClient({ url: netbox.url, token: 'nbt_wrong.token', timeoutMs: 2000 }) }),
          report(
            51,
            '2026-03-06T15:00:00Z',
            failing((i) => i % 3 === 0),
          ),
        ),
    ],
    [
      'report-deleted',
      async () =>
        render(
          composer(),
          report(
            52,
            '2026-03-06T15:00:00Z',
            failing((i) => i % 3 === 0),
            false,
          ),
        ),
    ],
    [
      'results-removed',
      async () => {
        const delivery = report(
          55,
          '2026-03-06T15:00:00Z',
          failing((i) => i % 3 === 0),
        );
        // A step after the webhook raised: validity's error callback deleted the run's results; the report and its counts stay.
        const published = netbox.reports.get(55)!;
        netbox.reports.set(55, { ...published, results: [], fields: countResults(published.results) });
        return render(composer(), delivery);
      },
    ],
    [
      'netbox-timeout',
      async () => {
        netbox.slowOffsets.set(0, 30_000);
        return render(
          composer({ budgetMs: 500 }),
          report(
            53,
            '2026-03-06T15:00:00Z',
            failing((i) => i % 3 === 0),
          ),
        );
      },
    ],
    [
      'netbox-unreachable',
      async () => {
        const gone = await startNetboxDouble({ authorization: 'x' });
        const url = gone.url;
        await gone.close();
        const unreachable = createNetboxClient({ url, token: TOKEN, timeoutMs: 2000, retryBaseMs: 10 });
        const result = await render(
          composer({ client: unreachable }),
          report(
            54,
            '2026-03-06T15:00:00Z',
            failing((i) => i % 3 === 0),
          ),
        );
        unreachable.close();
        // The port is in the reason: normalize it like the double's URL.
        return {
          text: result.text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT'),
          html: result.html.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT'),
        };
      },
    ],
  ];

  async function render(compose: ReturnType<typeof composer>, delivery: DeliveryRecord): Promise<{ text: string; html: string }> {
    const mail = await compose(delivery);
    expect(mail.attachments).toEqual([]);
    return { text: String(mail.text), html: String(mail.html) };
  }

  it.each(degraded)('still mails the counts, with one line saying why details are missing: %s', async (name, run) => {
    const { text, html } = await run();
    expect(text).toContain('Failing tests are not listed: ');
    expect(text).toMatch(/passed/);
    expect(text).not.toContain('WHAT FAILED');
    expectGolden(`${name}.txt`, text, netbox.url);
    expectGolden(`${name}.html`, html, netbox.url);
  });
});

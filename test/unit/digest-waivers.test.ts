import fs from 'node:fs';
import { buildDigestMail } from '../../src/compose';
import { collectDigest } from '../../src/digest';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseRoutesFile } from '../../src/routing';
import { SqliteStore } from '../../src/store';
import { buildReportSnapshot, buildSourceSeriesKey, type FailingPair } from '../../src/trend';
import { buildWaiverEnd, type Waiver } from '../../src/waivers';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { saveReport } from '../helpers/store-writes';

/** A digest counts accepted exceptions apart: its change and worst devices leave them out, the percentages stay NetBox's. */

const DAY_MS = 86_400_000;
const T = Date.parse('2026-11-23T07:00:00Z');
const telnet: FailingPair = { device: 'lab-sw1', test: 'telnet-disabled', severity: 'HIGH' };
const ntp: FailingPair = { device: 'sw2', test: 'ntp-synced', severity: 'MIDDLE' };
const waiver: Waiver = {
  id: '1',
  origin: 'store',
  source: 'default',
  test: 'telnet-disabled',
  device: 'lab-sw1',
  until: '2026-12-31',
  endsAt: buildWaiverEnd('2026-12-31'),
  reason: 'Lab switch, retired soon',
  author: 'alice',
  createdAt: T,
  expiredAt: null,
  expiredBy: null,
};

describe('a digest with an accepted exception (real SQLite file)', () => {
  let dir: string;
  let store: SqliteStore;
  beforeAll(async () => {
    dir = makeTempDir('digest-waivers-');
    store = SqliteStore.open({ dataDir: dir });
    await store.migrate();
    // Report 1: ntp fails; report 2: telnet newly fails on lab-sw1 too.
    for (const [i, failing] of [[ntp], [ntp, telnet]].entries()) {
      const created = new Date(T + (i + 1) * DAY_MS).toISOString();
      const high = failing.filter((p) => p.severity === 'HIGH').length;
      const data = buildReportData({
        id: 1 + i,
        created,
        total_passed: 4 - failing.length,
        total_count: 4,
        high_passed: 2 - high,
        high_count: 2,
        middle_passed: 1,
        middle_count: 2,
        low_passed: 0,
        low_count: 0,
      });
      const body = buildBody({ data });
      const report = parseDelivery(body);
      if (report.kind !== 'report') throw new Error('not a report');
      await store.insertDelivery({
        ...report,
        sender: '127.0.0.1',
        body,
        receivedAt: T + (i + 1) * DAY_MS,
      });
      const series = buildSourceSeriesKey({ source: 'default', reportUrl: report.report.url });
      await saveReport(store, buildReportSnapshot(report, series, failing));
    }
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function digestMail(waivers?: Waiver[]) {
    const [route] = parseRoutesFile(
      ['routes:', '  - name: weekly', '    to: a@example.com', '    digest: { schedule: "0 7 * * MON", timezone: UTC }', ''].join('\n'),
      'routes.yaml',
    );
    const job = { route: 'weekly', periodStart: T, periodEnd: T + 7 * DAY_MS, late: false, queuedAt: T + 7 * DAY_MS };
    const sources = [{ name: 'default', tags: {} }];
    const content = await collectDigest({ store, sources, waivers: waivers && (() => Promise.resolve(waivers)) }, route, job, 'UTC');
    const mail = await buildDigestMail(content, route, {
      renderer: loadRenderer(defaultTemplatesDir()),
      from: 'relay@example.com',
      delivery: { id: 1, dedupKey: 'digest:weekly' },
      date: new Date(job.queuedAt),
    });
    return mail;
  }
  const digestText = async (waivers?: Waiver[]) => String((await digestMail(waivers)).text);

  it('without the waiver the newly failing HIGH pair is the period`s change', async () => {
    const text = await digestText();
    expect(text).toContain('lab-sw1');
    expect(text).not.toContain('Accepted exceptions');
  });

  it('with it, the pair is counted apart and neither a change nor a worst device', async () => {
    const text = await digestText([waiver]);
    expect(text).toContain("Accepted exceptions: 1 waived result in report 2, not counted as changes (the percentages are NetBox's).");
    expect(text).not.toContain('lab-sw1');
  });

  it('its subject counts the HIGH failures the digest lists as failing, the accepted one apart', async () => {
    expect((await digestMail()).subject).toMatch(/, 1 HIGH failing \u2014 digest weekly/);
    expect((await digestMail([waiver])).subject).toMatch(/, no HIGH failing, 1 accepted \u2014 digest weekly/);
  });
});

import fs from 'node:fs';
import { buildDigestMail, buildDigestView, sampleDigestContents } from '../../src/compose';
import { DAY_MS } from '../../src/waivers';
import { collectDigest } from '../../src/digest';
import { SqliteStore } from '../../src/store';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseDigestSchedule, parseRoutesFile, planRoutes, RoutesFileError, type ReportFacts } from '../../src/routing';
import { buildPeriodTrend, buildReportSnapshot, buildSourceSeriesKey, type FailingPair, type ReportSnapshot } from '../../src/trend';
import { saveReport } from '../helpers/store-writes';

function issuesOf(text: string): RoutesFileError['issues'] {
  try {
    parseRoutesFile(text, 'routes.yaml');
  } catch (error) {
    if (error instanceof RoutesFileError) return error.issues;
    throw error;
  }
  throw new Error('expected the routes file to be rejected');
}

const FACTS: ReportFacts = {
  reportId: 7,
  completedAt: '2026-03-07T10:00:00.000Z',
  counts: {
    HIGH: { passed: 9, count: 10 },
    MIDDLE: { passed: 10, count: 10 },
    LOW: { passed: 0, count: 0 },
    overall: { passed: 19, count: 20 },
  },
  customFields: {},
  source: { name: 'default', tags: {} },
};

describe('digest routes in the routes file', () => {
  it('reads a digest route; its time zone is optional', () => {
    const [route, plain] = parseRoutesFile(
      [
        'routes:',
        '  - name: weekly',
        '    to: a@example.com',
        '    digest: { schedule: "0 8 * * MON", timezone: Europe/Berlin }',
        '  - name: daily',
        '    to: b@example.com',
        '    digest: { schedule: "30 6 * * *" }',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    expect(route.digest).toEqual({ schedule: '0 8 * * MON', timezone: 'Europe/Berlin' });
    expect(plain.digest).toEqual({ schedule: '30 6 * * *' });
  });

  it('names a bad schedule, an unknown time zone, and the fields that mean nothing on a digest route', () => {
    const issues = issuesOf(
      [
        'routes:',
        '  - name: weekly',
        '    to: a@example.com',
        '    notify: on-change',
        '    continue: true',
        '    attach_csv: true',
        '    digest: { schedule: "every monday", timezone: Mars/Olympus }',
        '',
      ].join('\n'),
    );
    const byWhere = Object.fromEntries(issues.map((i) => [i.where, i.message]));
    expect(byWhere['route 1 (weekly) digest.schedule']).toMatch(/^is not a cron expression/);
    expect(byWhere['route 1 (weekly) digest.timezone']).toMatch(/^is not a time zone name/);
    expect(byWhere['route 1 (weekly) notify']).toMatch(/does not apply to a digest route/);
    expect(byWhere['route 1 (weekly) continue']).toMatch(/does not apply to a digest route/);
    expect(byWhere['route 1 (weekly) attach_csv']).toMatch(/does not apply to a digest route/);

    // A valid schedule in an unknown zone is one problem, the zone's.
    const zoneOnly = issuesOf(
      ['routes:', '  - name: z', '    to: a@example.com', '    digest: { schedule: "0 8 * * *", timezone: Mars/Olympus }', ''].join('\n'),
    );
    expect(zoneOnly.map((i) => i.where)).toEqual(['route 1 (z) digest.timezone']);

    // A digest goes to fixed addresses: NetBox's contacts (a route by owner) are refused on it.
    const owners = issuesOf(
      [
        'routes:',
        '  - name: w',
        '    to: { netbox_contacts: { role: owner }, fallback: noc@example.com, allowed_domains: example.com }',
        '    digest: { schedule: "0 8 * * *" }',
        '',
      ].join('\n'),
    );
    expect(owners.map((i) => [i.where, i.message])).toEqual([
      ['route 1 (w) to.netbox_contacts', 'does not apply to a digest route (a digest goes to fixed addresses)'],
    ]);
  });

  it('a digest route never mails a report and never stops the routes after it', () => {
    const routes = parseRoutesFile(
      [
        'routes:',
        '  - name: weekly',
        '    to: a@example.com',
        '    match: { failed: { severity: HIGH, above: 0 } }',
        '    digest: { schedule: "0 8 * * MON" }',
        '  - name: quiet',
        '    to: c@example.com',
        '    match: { failed: { severity: LOW, above: 0 } }',
        '    digest: { schedule: "0 8 * * MON" }',
        '  - name: on-call',
        '    to: b@example.com',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    const plan = planRoutes(routes, FACTS, null, () => null);
    expect(plan.map((d) => [d.route, d.outcome, d.reason])).toEqual([
      ['weekly', 'skipped', 'matched: goes into the digest (0 8 * * MON)'],
      ['quiet', 'skipped', 'not matched (digest route)'],
      ['on-call', 'send', 'matched (notify: always)'],
    ]);
    // After a route that stops the chain, a digest still decides on its own conditions (as its digest gathers).
    const after = parseRoutesFile(
      [
        'routes:',
        '  - name: on-call',
        '    to: b@example.com',
        '  - name: weekly',
        '    to: a@example.com',
        '    digest: { schedule: "0 8 * * MON" }',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    expect(planRoutes(after, FACTS, null, () => null).map((d) => [d.route, d.outcome, d.reason])).toEqual([
      ['on-call', 'send', 'matched (notify: always)'],
      ['weekly', 'skipped', 'matched: goes into the digest (0 8 * * MON)'],
    ]);
  });
});

describe('digest schedules (croner) in their time zone', () => {
  it('finds the tick at or before a time and the next one, across a daylight-saving change', () => {
    const schedule = parseDigestSchedule('0 8 * * MON', 'Europe/Berlin');
    // 08:00 in Berlin is 07:00 UTC in winter and 06:00 UTC in summer (clocks moved on 29 March 2026).
    expect(schedule.tickAtOrBefore(Date.parse('2026-03-23T07:00:00Z'))).toBe(Date.parse('2026-03-23T07:00:00Z'));
    expect(schedule.tickAtOrBefore(Date.parse('2026-03-23T06:59:59Z'))).toBe(Date.parse('2026-03-16T07:00:00Z'));
    expect(schedule.tickAfter(Date.parse('2026-03-23T07:00:00Z'))).toBe(Date.parse('2026-03-30T06:00:00Z'));
  });

  it('refuses a schedule that never fires', () => {
    expect(() => parseDigestSchedule('0 0 30 2 *', 'UTC')).toThrow('never fires');
  });
});

function snapshot(reportId: number, hour: number, passed: number, failing: FailingPair[] | null): ReportSnapshot {
  const created = new Date(Date.UTC(2026, 2, 2, hour)).toISOString();
  return {
    dedupKey: `${reportId}@${created}`,
    series: 'https://netbox.example.com|',
    reportId,
    created,
    createdMs: Date.parse(created),
    counts: {
      overall: { passed: passed, count: 10 },
      HIGH: { passed: 5, count: 5 },
      MIDDLE: { passed: passed - 5, count: 5 },
      LOW: { passed: 0, count: 0 },
    },
    failing,
  };
}

describe('the period trend of a series', () => {
  const ntp: FailingPair = { device: 'sw1', test: 'ntp', severity: 'MIDDLE' };
  const snmp: FailingPair = { device: 'sw2', test: 'snmp', severity: 'MIDDLE' };
  const banner: FailingPair = { device: 'sw1', test: 'banner', severity: 'MIDDLE' };

  it('measures the latest report against the one before the period: change, newly failing, fixed, worst devices', () => {
    const before = snapshot(1, 0, 9, [ntp]);
    const trend = buildPeriodTrend([snapshot(3, 8, 8, [ntp, banner]), snapshot(2, 4, 7, [ntp, snmp, banner])], before);
    expect(trend.points.map((p) => [p.reportId, p.ratios.overall])).toEqual([
      [2, 70],
      [3, 80],
    ]);
    expect(trend.baseline).toEqual({ reportId: 1, created: before.created, inPeriod: false });
    expect(trend.change.overall).toMatchObject({ percent: 80, previousPercent: 90, deltaPointsText: '−10.0 pts' });
    // snmp failed and was fixed within the period: in neither list.
    expect(trend.change.newlyFailing).toEqual([banner]);
    expect(trend.change.fixed).toEqual([]);
    expect(trend.worstDevices).toEqual([{ device: 'sw1', failing: 2, high: 0 }]);
  });

  it("without a report before the period, measures against the period's first; a lone first report has no baseline", () => {
    const trend = buildPeriodTrend([snapshot(2, 4, 7, null), snapshot(3, 8, 8, null)], undefined);
    expect(trend.baseline).toMatchObject({ reportId: 2, inPeriod: true });
    expect(trend.change.failingSetKnown).toBe(false);
    expect(trend.worstDevices).toEqual([]);
    expect(buildPeriodTrend([snapshot(2, 4, 7, null)], undefined).baseline).toBeNull();
  });
});

describe('the digest view', () => {
  it('lists the newest 10 reports of a series and counts the others; the sparkline has one block per report', () => {
    const reports = Array.from({ length: 12 }, (_, i) => snapshot(i + 1, i, 5 + (i % 6), null));
    const series = buildPeriodTrend(reports, undefined);
    const base = { route: 'r', periodStart: 0, periodEnd: 1, late: false, queuedAt: 1, timezone: 'UTC', silentSources: [] };
    const [view] = buildDigestView({ ...base, sources: [{ source: 'default', series: [series] }] }).digest.sources[0].series;
    expect(view.reports.map((r) => r.reportId)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    expect(view.moreReports).toBe(2);
    expect(view.chart.points).toHaveLength(12);
    // On the chart's own y range (round ticks around 50–100 %), as a report mail's sparkline.
    expect(view.chart.sparkline).toBe('▂▃▄▆▇█▂▃▄▆▇█');
    expect(view.chart.rangeText).toBe('40\u2013100%');
  });
  it("links the latest report under NETBOX_URL's own path once, not twice", () => {
    // NetBox served under /netbox: NETBOX_URL carries the path, and so does the report's API url.
    const atPath = (reportId: number, series: string) => ({ ...snapshot(reportId, reportId, 8, null), series });
    const link = (series: string) => {
      const trend = buildPeriodTrend([atPath(4, series)], undefined);
      const base = { route: 'r', periodStart: 0, periodEnd: 1, late: false, queuedAt: 1, timezone: 'UTC', silentSources: [] };
      return buildDigestView({ ...base, sources: [{ source: 'default', series: [trend] }] }).digest.sources[0].series[0].latestUrl;
    };
    expect(link('https://nb.example.com/netbox|/netbox')).toBe('https://nb.example.com/netbox/plugins/validity/reports/4/');
    expect(link('source:lab|https://lab.example.com|')).toBe('https://lab.example.com/plugins/validity/reports/4/');
    // Without NETBOX_URL there is no absolute link to give.
    expect(link('netbox|/netbox')).toBeNull();
  });
});

describe('the shipped digest template', () => {
  it('renders the sample digests: figures, sparkline, silent sources, late and empty periods', () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    const [full, lateEmpty] = sampleDigestContents('UTC').map((c) => renderer.render(buildDigestView(c), 'digest'));
    // The most urgent verdict of its series first, as a report mail's subject.
    expect(full.subject).toBe('Mixed: 1 of 2 NetBoxes, 1 HIGH failing \u2014 digest sample \u00b7 3 reports');
    expect(full.text).toContain('No report at all was received from the NetBox source lab this period.');
    expect(full.text).toContain('Overall, last 2 reports (oldest first, 90\u201396%): ▁▇');
    expect(full.text).toContain('Newly failing (1):\n  - [MIDDLE] snmp-community on sw-core-01');
    expect(full.text).toContain('Fixed (1):\n  - [LOW] banner on sw-edge-07');
    expect(full.html).toContain('<table class="chart" title="Pass ratio per severity over the last 2 reports (41 to 42)');
    expect(lateEmpty.subject).toBe('[late] No reports \u2014 digest sample \u00b7 0 reports');
    expect(lateEmpty.text).toContain('No matching report was received this period.');
  });
});

describe('gathering a digest from the store (real SQLite file)', () => {
  const T = Date.parse('2026-03-02T07:00:00Z');
  let dir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dir = makeTempDir('digest-collect-');
    store = SqliteStore.open({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A report of `source` received at `receivedAt`, stored as the webhook does; `snapshot` as its mail recorded it. */
  async function receive(source: string, id: number, receivedAt: number, failed: number, failing: FailingPair[] | null) {
    const created = new Date(receivedAt - 60_000).toISOString();
    const body = buildBody({ data: buildReportData({ id, created, total_passed: 8 - failed, total_count: 8, middle_passed: 8 - failed }) });
    const delivery = parseDelivery(body, source);
    if (delivery.kind !== 'report') throw new Error('not a report');
    await store.insertDelivery({
      ...delivery,
      sender: '127.0.0.1',
      body,
      receivedAt,
    });
    const series = buildSourceSeriesKey({ source, reportUrl: delivery.report.url });
    if (failing) await saveReport(store, buildReportSnapshot(delivery, series, failing));
  }

  it("keeps the period's matching reports, measures against the report before, and names the silent sources the route watches", async () => {
    const ntp: FailingPair = { device: 'sw1', test: 'ntp', severity: 'MIDDLE' };
    const snmp: FailingPair = { device: 'sw2', test: 'snmp', severity: 'MIDDLE' };
    await receive('lab', 10, T - 3_600_000, 1, [ntp]); // before the period
    await receive('lab', 11, T + 1_000, 2, [ntp, snmp]);
    await receive('lab', 12, T + 2_000, 0, []); // nothing failed: the route's condition leaves it out
    await receive('lab', 13, T + 3_000, 1, [snmp]);
    await receive('default', 14, T + 4_000, 3, null); // another source: not this route's
    await receive('lab', 15, T + 7 * DAY_MS, 1, [snmp]); // at the tick: the next period's
    const [route] = parseRoutesFile(
      [
        'routes:',
        '  - name: weekly',
        '    to: a@example.com',
        '    match: { all: [ { source: [lab, prod] }, { failed: { above: 0 } } ] }',
        '    digest: { schedule: "0 7 * * MON", timezone: UTC }',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    const sources = ['default', 'lab', 'prod'].map((name) => ({ name, tags: {} }));
    const job = { route: 'weekly', periodStart: T, periodEnd: T + 7 * DAY_MS, late: false, queuedAt: T + 7 * DAY_MS };
    const content = await collectDigest({ store, sources }, route, job, 'UTC');
    expect(content.silentSources).toEqual(['prod']);
    expect(content.sources.map((s) => s.source)).toEqual(['lab']);
    const [series] = content.sources[0].series;
    expect(series.points.map((p) => p.reportId)).toEqual([11, 13]);
    expect(series.baseline).toMatchObject({ reportId: 10, inPeriod: false });
    expect(series.change.newlyFailing).toEqual([snmp]);
    expect(series.change.fixed).toEqual([ntp]);
    expect(series.worstDevices).toEqual([{ device: 'sw2', failing: 1, high: 0 }]);
  });
});

describe('a digest mail', () => {
  it('is named a digest in its Message-ID, never "report-0", and carries a verdict and dark-mode styles', async () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    const [content] = sampleDigestContents('UTC');
    const [route] = parseRoutesFile(
      ['routes:', '  - name: sample', '    to: ops@example.com', '    digest: { schedule: "0 7 * * MON" }', ''].join('\n'),
      'routes.yaml',
    );
    const mail = await buildDigestMail(content, route, {
      renderer,
      from: 'Compliance <relay@example.com>',
      delivery: { id: 7, dedupKey: 'digest:sample@2023-04-10T05:00:00.000Z' },
      date: new Date(0),
    });
    expect(mail.messageId).toMatch(/^<digest\.d7\.sample\.[0-9a-f]{16}@example\.com>$/);
    expect(String(mail.html)).toMatch(/<p class="verdict verdict-(worse|mixed|better|same|first)"/);
    expect(String(mail.html)).toContain('prefers-color-scheme: dark');
    // Times to the minute: a digest spans days.
    expect(String(mail.text)).not.toMatch(/\d\d:\d\d:\d\d/);
  });
});

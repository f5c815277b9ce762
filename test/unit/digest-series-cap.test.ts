import fs from 'node:fs';
import { simpleParser } from 'mailparser';
import { buildDigestMail } from '../../src/compose';
import { DAY_MS } from '../../src/waivers';
import { collectDigest, MAX_DIGEST_SERIES } from '../../src/digest';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseRoutesFile } from '../../src/routing';
import { SqliteStore } from '../../src/store';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';

/** A digest stays one readable mail however many series NetBox's report URLs start. */

const SERIES = 2_000;
const T = Date.parse('2026-03-02T07:00:00Z');

describe(`a digest over ${SERIES} series (real SQLite file)`, () => {
  let dir: string;
  let store: SqliteStore;
  beforeAll(async () => {
    dir = makeTempDir('digest-cap-');
    store = SqliteStore.open({ dataDir: dir });
    // Each report has its own base path, so each starts a series; the first 20 fail most.
    for (let i = 0; i < SERIES; i += 1) {
      const failed = i < MAX_DIGEST_SERIES ? 8 : i % 8;
      const created = new Date(T + 1_000 + i).toISOString();
      const data = buildReportData({
        id: 1_000 + i,
        created,
        basePath: `/nb${i}`,
        total_passed: 8 - failed,
        total_count: 8,
        middle_passed: 8 - failed,
      });
      const body = buildBody({ data });
      const report = parseDelivery(body);
      if (report.kind !== 'report') throw new Error('not a report');
      await store.insertDelivery({
        ...report,
        sender: '127.0.0.1',
        body,
        receivedAt: T + 1_000 + i,
      });
    }
  }, 120_000);
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`gives the ${MAX_DIGEST_SERIES} worst series a section, and every other one a table row`, async () => {
    const [route] = parseRoutesFile(
      ['routes:', '  - name: weekly', '    to: a@example.com', '    digest: { schedule: "0 7 * * MON", timezone: UTC }', ''].join('\n'),
      'routes.yaml',
    );
    const job = { route: 'weekly', periodStart: T, periodEnd: T + 7 * DAY_MS, late: false, queuedAt: T + 7 * DAY_MS };
    const content = await collectDigest({ store, sources: [{ name: 'default', tags: {} }] }, route, job, 'UTC');
    const detailed = content.sources.flatMap((s) => s.series);
    expect(detailed).toHaveLength(MAX_DIGEST_SERIES);
    expect(detailed.every((t) => t.latest.failed.overall === 8)).toBe(true);
    expect(content.otherSeries).toHaveLength(SERIES - MAX_DIGEST_SERIES);

    const mail = await buildDigestMail(content, route, {
      renderer: loadRenderer(defaultTemplatesDir()),
      from: 'relay@example.com',
      delivery: { id: 1, dedupKey: 'digest:weekly' },
      date: new Date(job.queuedAt),
    });
    // One report per series: one point is not a trend, so no section has a chart (and a chart is never an attachment).
    expect((await simpleParser(mail.raw)).attachments).toEqual([]);
    expect(String(mail.html)).not.toContain('class="chart"');
    const text = String(mail.text);
    expect(text).toContain(`== ${SERIES - MAX_DIGEST_SERIES} more series (fewer failing results; one line each, no chart) ==`);
    // One line per summarised series, each naming its NetBox base path, its figures and its latest report.
    expect(text).toContain('default: netbox/nb1999  12.5%  7 failing  1 report, latest report 2999 (2026-03-02 07:00 UTC)');
    expect(text.split('\n').filter((line) => line.startsWith('default: netbox/nb'))).toHaveLength(SERIES - MAX_DIGEST_SERIES);
    expect(String(mail.html)).toMatch(new RegExp(`<h2[^>]*>${SERIES - MAX_DIGEST_SERIES} more series</h2>`));
    // A series section holds some kilobytes; a row some hundred bytes: the mail stays well under a few megabytes.
    expect(Buffer.byteLength(String(mail.html))).toBeLessThan(2 * 1024 * 1024);
  }, 120_000);
});

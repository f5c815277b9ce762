/**
 * Enrichment benchmark: a report of 50,000 results, 20% failing, with large explanations, served
 * in pages of 1000 by the NetBox double in a CHILD process (so its memory is not counted here).
 * Measured in this process: peak RSS and time of
 *   1. the relay's enrichment as shipped (passed=false&omit=explanation) against a NetBox that
 *      ignores `omit` (< 4.5.2): 10 pages, explanations dropped while streaming;
 *   2. streaming and summarizing all 50 pages (a NetBox that honoured no filter at all);
 *   3. the baseline: plainly downloading the same 50 pages (bytes read and discarded).
 * Run: npm run build && node dist/bench/enrichment.js   (prints one table; exits non-zero if RSS ≥ 200 MB)
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createFailureSummarizer, enrichReport } from '../src/enrichment';
import { createNetboxClient } from '../src/netbox';
import { parseDelivery, type ReportDelivery } from '../src/webhook';
import { buildBody, buildReportData } from '../test/helpers/netbox-json';
import { buildResults, startNetboxDouble } from '../test/helpers/validity-results-double';

const RESULTS = 50_000;
const FAILING_EVERY = 5; // 20%
const EXPLANATION_BYTES = 4_000;
const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const REPORT_ID = 500;
const CREATED = '2026-03-06T15:11:18.123456Z';
const RSS_LIMIT_MB = 200;

async function serve(): Promise<void> {
  const double = await startNetboxDouble({ authorization: `Token ${TOKEN}`, honoursOmit: false });
  double.reports.set(REPORT_ID, {
    id: REPORT_ID,
    created: CREATED,
    results: buildResults(RESULTS, {
      fails: (i) => i % FAILING_EVERY === 0,
      explanationBytes: EXPLANATION_BYTES,
      tests: [
        { id: 1, name: 'ntp-servers', severity: 'HIGH' },
        { id: 2, name: 'snmp-community', severity: 'MIDDLE' },
        { id: 3, name: 'mtu-9000', severity: 'LOW' },
        { id: 4, name: 'banner', severity: 'LOW' },
        { id: 5, name: 'aaa-servers', severity: 'HIGH' },
        { id: 6, name: 'syslog', severity: 'MIDDLE' },
        { id: 7, name: 'ssh-v2', severity: 'HIGH' },
      ],
    }),
  });
  process.send?.({ url: double.url });
}

function delivery(): ReportDelivery {
  const failing = RESULTS / FAILING_EVERY;
  const parsed = parseDelivery(
    buildBody({ version: '4.6', data: buildReportData({ id: REPORT_ID, created: CREATED, total_passed: RESULTS - failing, total_count: RESULTS, middle_passed: RESULTS - failing, middle_count: RESULTS, high_passed: 0, high_count: 0, low_passed: 0, low_count: 0 }) }),
  );
  if (parsed.kind !== 'report') throw new Error('not a report');
  return parsed;
}

/** Peak RSS since the last reset is not resettable in Node: sample it instead while a step runs. */
async function measure<T>(step: () => Promise<T>): Promise<{ ms: number; peakRssMb: number; value: T }> {
  global.gc?.();
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const started = performance.now();
  const value = await step();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { ms, peakRssMb: peak / 1024 / 1024, value };
}

function download(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { Authorization: `Token ${TOKEN}`, Accept: 'application/json' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(__filename, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  try {
    const client = createNetboxClient({ url, token: TOKEN, timeoutMs: 60_000 });
    const resultsPath = `/api/plugins/validity/test-results/?report_id=${REPORT_ID}`;
    const rows: string[][] = [];

    const baseline = await measure(async () => {
      let bytes = 0;
      for (let offset = 0; offset < RESULTS; offset += 1000) bytes += await download(`${url}${resultsPath}&limit=1000&offset=${offset}`);
      return bytes;
    });
    rows.push(['plain download, 50 pages (baseline)', `${(baseline.value / 1e6).toFixed(0)} MB`, baseline.ms.toFixed(0), baseline.peakRssMb.toFixed(0)]);

    const all = await measure(async () => {
      const summarizer = createFailureSummarizer();
      const r = await client.streamList(`${resultsPath}&limit=1000`, (page) => summarizer.add(page), { deadline: Date.now() + 600_000 });
      return { pages: r.pages, failing: summarizer.finish().results.length };
    });
    rows.push([`stream + summarize, ${all.value.pages} pages, all results`, `${all.value.failing} failing`, all.ms.toFixed(0), all.peakRssMb.toFixed(0)]);

    const shipped = await measure(() => enrichReport(delivery(), { client, hasToken: true, budgetMs: 600_000 }));
    const failing = shipped.value.status === 'ok' ? shipped.value.summary.results.length : `missing: ${shipped.value.reason}`;
    rows.push(['enrichment as shipped (passed=false), omit ignored', `${failing} failing`, shipped.ms.toFixed(0), shipped.peakRssMb.toFixed(0)]);
    client.close();

    const peak = Math.max(baseline.peakRssMb, all.peakRssMb, shipped.peakRssMb);
    console.log(`\nEnrichment: ${RESULTS} results, ${100 / FAILING_EVERY}% failing, ${EXPLANATION_BYTES} B explanations, pages of 1000 (node ${process.version})\n`);
    console.log('| step | data | time (ms) | peak RSS (MB) |');
    console.log('|---|---|---:|---:|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log(`\npeak RSS ${peak.toFixed(0)} MB (limit ${RSS_LIMIT_MB} MB): ${peak < RSS_LIMIT_MB ? 'OK' : 'OVER'}`);
    if (peak >= RSS_LIMIT_MB) process.exitCode = 1;
  } finally {
    child.kill();
  }
}

if (process.argv.includes('--serve')) void serve();
else void main();

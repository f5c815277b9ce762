/**
 * One measured step of the enrichment benchmark, alone in a fresh process so that its peak RSS
 * (VmHWM) is its own. STEP=download: plain GET of the pages, bytes counted and dropped;
 * STEP=stream-all: the relay's client streams and summarizes every result (no filter);
 * STEP=enrich: the relay's enrichment as shipped (passed=false&omit=explanation, omit ignored).
 * PAGES_FILTER=failed makes `download` fetch the pages `enrich` fetches. IPC: `done {ms, peakRssMb, detail}`.
 */
import fs from 'node:fs';
import http from 'node:http';
import { createFailureSummarizer, enrichReport } from '../../src/enrichment';
import { createNetboxClient } from '../../src/netbox';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../../test/helpers/netbox-json';
import { BENCH_CREATED, BENCH_REPORT_ID, BENCH_TOKEN } from './validity-netbox';

function download(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { Authorization: `Token ${BENCH_TOKEN}`, Accept: 'application/json' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function peakRssMb(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number(kb) / 1024;
}

async function main(): Promise<void> {
  const url = process.env.NETBOX_URL!;
  const results = Number(process.env.RESULTS);
  const failing = Math.ceil(results / Number(process.env.FAILING_EVERY));
  const step = process.env.STEP;
  const resultsPath = `/api/plugins/validity/test-results/?report_id=${BENCH_REPORT_ID}`;
  const client = createNetboxClient({ url, token: BENCH_TOKEN, timeoutMs: 60_000 });
  const started = performance.now();
  let detail = '';
  if (step === 'download') {
    const failedOnly = process.env.PAGES_FILTER === 'failed';
    const rows = failedOnly ? failing : results;
    let bytes = 0;
    let pages = 0;
    for (let offset = 0; offset < rows; offset += 1000, pages += 1) {
      bytes += await download(`${url}${resultsPath}${failedOnly ? '&passed=false' : ''}&limit=1000&offset=${offset}`);
    }
    detail = `${pages} pages, ${(bytes / 1e6).toFixed(0)} MB`;
  } else if (step === 'stream-all') {
    const summarizer = createFailureSummarizer();
    const r = await client.streamList(`${resultsPath}&limit=1000`, (page) => summarizer.add(page), { deadline: Date.now() + 3_600_000 });
    detail = `${r.pages} pages, ${summarizer.finish().results.length} failing found`;
  } else {
    const parsed = parseDelivery(
      buildBody({
        version: '4.6',
        data: buildReportData({
          id: BENCH_REPORT_ID,
          created: BENCH_CREATED,
          total_passed: results - failing,
          total_count: results,
          middle_passed: results - failing,
          middle_count: results,
          high_passed: 0,
          high_count: 0,
          low_passed: 0,
          low_count: 0,
        }),
      }),
    );
    if (parsed.kind !== 'report') throw new Error('not a report');
    const enrichment = await enrichReport(parsed, { client, budgetMs: 3_600_000 });
    if (enrichment.status !== 'ok') throw new Error(enrichment.reason);
    detail = `${enrichment.summary.results.length} failing results, ${enrichment.summary.tests.length} tests, ${enrichment.summary.devices.length} devices`;
  }
  const ms = performance.now() - started;
  client.close();
  process.send!({ type: 'done', ms, peakRssMb: peakRssMb(), detail });
}

if (require.main === module) void main();

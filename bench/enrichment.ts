/**
 * Enrichment: a report of 50,000 results, 20% failing, 4 kB of explanation each, served in pages of
 * 1000 by the validity double in its own process, ignoring ?omit=explanation (NetBox < 4.5.2, the
 * worst case). Each measured step runs alone in a fresh process so its peak RSS is its own:
 * the enrichment as shipped (10 pages of failures) next to a plain download of the same pages, and
 * streaming + summarizing all 50 pages next to a plain download of those 50 pages.
 * Run: `npm run bench -- --only enrichment`.
 */
import type { ChildProcess } from 'node:child_process';
import { forkBenchScript, stopChild, waitForMessage } from './lib/processes';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/** The issue's bound for the relay while it fetches and summarizes such a report. */
const RSS_LIMIT_MB = 200;

interface StepResult {
  ms: number;
  peakRssMb: number;
  detail: string;
}

async function runStep(env: Record<string, string>, ctx: BenchContext): Promise<StepResult> {
  const child = forkBenchScript('servers/enrichment-step.js', { env });
  try {
    const result = await waitForMessage<StepResult>(child, 'done', 900_000);
    ctx.log(
      `${env.STEP}${env.PAGES_FILTER ? ` (${env.PAGES_FILTER})` : ''}: ${result.ms.toFixed(0)} ms, peak RSS ${result.peakRssMb.toFixed(0)} MB, ${result.detail}`,
    );
    return result;
  } finally {
    await stopChild(child);
  }
}

export const enrichmentBenchmark: Benchmark = {
  id: 'enrichment',
  title: 'Enrichment (50,000 results, 20% failing, explanations not omitted)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const data = { RESULTS: String(ctx.quick ? 3_000 : 50_000), FAILING_EVERY: '5', EXPLANATION_BYTES: String(ctx.quick ? 500 : 4_000) };
    let netbox: ChildProcess | undefined;
    try {
      netbox = forkBenchScript('servers/validity-netbox.js', { env: data });
      const { url } = await waitForMessage<{ url: string }>(netbox, 'ready', 120_000);
      const env = { ...data, NETBOX_URL: url };
      const downloadFailed = await runStep({ ...env, STEP: 'download', PAGES_FILTER: 'failed' }, ctx);
      const enrich = await runStep({ ...env, STEP: 'enrich' }, ctx);
      const downloadAll = await runStep({ ...env, STEP: 'download' }, ctx);
      const streamAll = await runStep({ ...env, STEP: 'stream-all' }, ctx);
      return [
        {
          name: 'enrichment peak RSS',
          value: enrich.peakRssMb,
          unit: 'MB',
          baseline: { name: 'plain download of the same pages', value: downloadFailed.peakRssMb },
          target: { kind: 'at-most', value: RSS_LIMIT_MB },
          note: `whole process; ${enrich.detail}`,
        },
        {
          name: 'enrichment time (passed=false, 10 pages)',
          value: enrich.ms,
          unit: 'ms',
          baseline: { name: 'plain download of the same pages', value: downloadFailed.ms },
          note: downloadFailed.detail,
        },
        {
          name: 'stream + summarize every result (50 pages) peak RSS',
          value: streamAll.peakRssMb,
          unit: 'MB',
          baseline: { name: 'plain download of the 50 pages', value: downloadAll.peakRssMb },
          target: { kind: 'at-most', value: RSS_LIMIT_MB },
          note: streamAll.detail,
        },
        {
          name: 'stream + summarize every result (50 pages) time',
          value: streamAll.ms,
          unit: 'ms',
          baseline: { name: 'plain download of the 50 pages', value: downloadAll.ms },
          note: `${downloadAll.detail}; the double building pages in its process sets the pace of both`,
        },
      ];
    } finally {
      if (netbox) await stopChild(netbox);
    }
  },
};

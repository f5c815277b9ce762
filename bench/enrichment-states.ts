/**
 * Telling fixed from not evaluated: reports of 10,000 devices × 50 tests (500,000 results), 1 % failing,
 * served by a validity double in its own process that computes results from their ids and serializes
 * them as validity does. For each change — typical (a tenth of the failing pairs fixed or new, 5 devices
 * not evaluated) and worst (another 1 % failing: every failing pair of both reports changed) — it
 * measures the relay asking NetBox about the changed pairs (readPairStates), next to the failing-only
 * fetch of the same report the relay made before (enrichReport), in the same run.
 * Run: `npm run bench -- --only enrichment-states`.
 */
import type { ChildProcess } from 'node:child_process';
import { enrichReport, readPairStates } from '../src/enrichment';
import { createNetboxClient, type NetboxClient } from '../src/netbox';
import { pairKey, type FailingPair } from '../src/trend';
import { parseDelivery } from '../src/webhook';
import { buildBody, buildReportData } from '../test/helpers/netbox-json';
import { forkBenchScript, stopChild, waitForMessage } from './lib/processes';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { GRID_CREATED, GRID_PREVIOUS, GRID_TOKEN, GRID_TYPICAL, GRID_WORST } from './servers/validity-grid-netbox';

const HOUR_MS = 3_600_000;
const ROUNDS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** What the relay asks NetBox to tell the three states apart between the previous report and `reportId`. */
function readStatesOf(client: NetboxClient, reportId: number, current: FailingPair[], previous: FailingPair[]) {
  return readPairStates({
    client,
    resultsUrl: `/api/plugins/validity/test-results/?report_id=${reportId}`,
    current,
    previous: { reportId: GRID_PREVIOUS, failing: previous },
    budget: { deadline: Date.now() + HOUR_MS },
    budgetMs: HOUR_MS,
  });
}

/** The failing pairs of a report as the relay reads them (enrichment as shipped), and how long that took. */
async function readFailing(client: NetboxClient, reportId: number, total: number): Promise<{ ms: number; pairs: FailingPair[] }> {
  const parsed = parseDelivery(
    buildBody({
      version: '4.6',
      data: buildReportData({ id: reportId, created: GRID_CREATED[reportId], total_passed: 0, total_count: total, middle_count: total }),
    }),
  );
  if (parsed.kind !== 'report') throw new Error('not a report');
  const started = performance.now();
  const enrichment = await enrichReport(parsed, { client, budgetMs: HOUR_MS });
  const ms = performance.now() - started;
  if (enrichment.status !== 'ok') throw new Error(enrichment.reason);
  return { ms, pairs: enrichment.summary.results };
}

async function countRequests(url: string): Promise<number> {
  const res = await fetch(`${url}/bench/requests`, { headers: { Authorization: `Token ${GRID_TOKEN}` } });
  return ((await res.json()) as { count: number }).count;
}

export const enrichmentStatesBenchmark: Benchmark = {
  id: 'enrichment-states',
  title: 'Fixed, not evaluated or not known (10,000 devices × 50 tests, 1% failing)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const devices = ctx.quick ? 200 : 10_000;
    const tests = ctx.quick ? 10 : 50;
    let netbox: ChildProcess | undefined;
    try {
      netbox = forkBenchScript('servers/validity-grid-netbox.js', { env: { DEVICES: String(devices), TESTS: String(tests) } });
      const { url } = await waitForMessage<{ url: string }>(netbox, 'ready', 120_000);
      const client = createNetboxClient({ url, token: GRID_TOKEN, timeoutMs: 60_000 });
      const previous = await readFailing(client, GRID_PREVIOUS, devices * tests);
      const figures: Figure[] = [];
      for (const [name, reportId] of [
        ['typical change', GRID_TYPICAL],
        ['worst change', GRID_WORST],
      ] as const) {
        // Each measured ROUNDS times, alternating, the median kept: the machine is shared.
        const fetchMs: number[] = [];
        const statesMs: number[] = [];
        let current = await readFailing(client, reportId, devices * tests);
        let states = await readStatesOf(client, reportId, current.pairs, previous.pairs);
        const before = await countRequests(url);
        for (let round = 0; round < ROUNDS; round += 1) {
          current = await readFailing(client, reportId, devices * tests);
          fetchMs.push(current.ms);
          const started = performance.now();
          states = await readStatesOf(client, reportId, current.pairs, previous.pairs);
          statesMs.push(performance.now() - started);
        }
        const ms = median(statesMs);
        const requests = ((await countRequests(url)) - before) / ROUNDS - Math.ceil(current.pairs.length / 1000);
        const now = [...(states.now ?? new Map<string, boolean>()).values()];
        const fixed = now.filter(Boolean).length;
        const previousKeys = new Set(previous.pairs.map(pairKey));
        const asked = now.length + current.pairs.filter((p) => !previousKeys.has(pairKey(p))).length;
        const detail = `${previous.pairs.length} → ${current.pairs.length} failing; ${fixed} fixed, ${now.length - fixed} not evaluated; ${requests} requests`;
        ctx.log(`${name}: states ${ms.toFixed(0)} ms (${detail}); failing-only fetch ${median(fetchMs).toFixed(0)} ms`);
        if (states.unknownReason) throw new Error(`NetBox could not tell: ${states.unknownReason}`);
        figures.push({
          name: `three states, ${name} (${asked} pairs asked)`,
          value: ms,
          unit: 'ms',
          baseline: { name: 'failing-only fetch of the same report', value: median(fetchMs) },
          note: detail,
        });
      }
      client.close();
      return figures;
    } finally {
      if (netbox) await stopChild(netbox);
    }
  },
};

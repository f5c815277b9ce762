import fs from 'node:fs';
import path from 'node:path';
import { computeInclusiveShare, summarizeSelfTime, type CpuProfile } from './lib/cpu-profile';
import { describeFailures, runLoad, type LoadResult } from './lib/load';
import { readStartNodeFlags, startBenchServer } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv, countStoredRows } from './lib/relay-env';
import type { Benchmark, BenchContext, Figure } from './lib/types';

interface IngestSettings {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Each server is measured this many times, alternating, and its best run kept (least disturbed by neighbours). */
  rounds: number;
}

let nextId = 1_000_000;

/** Warm-up (not counted), then the measured load; every request a new report id. */
async function loadServer(url: string, s: IngestSettings): Promise<{ measured: LoadResult; okTotal: number }> {
  let okTotal = 0;
  if (s.warmupSeconds > 0) {
    okTotal += (await runLoad({ url, connections: s.connections, durationSeconds: s.warmupSeconds, secret: BENCH_SECRET, firstId: nextId }))
      .ok;
    nextId += 1_000_000;
  }
  const measured = await runLoad({
    url,
    connections: s.connections,
    durationSeconds: s.durationSeconds,
    secret: BENCH_SECRET,
    firstId: nextId,
  });
  nextId += 1_000_000;
  return { measured, okTotal: okTotal + measured.ok };
}

/** One more relay run under `node --cpu-prof`: where the ack path spends its time. */
async function profileRelay(ctx: BenchContext, s: IngestSettings): Promise<{ sqliteShare: number; summary: string }> {
  const dir = path.join(ctx.tmpDir, 'profile');
  fs.mkdirSync(dir, { recursive: true });
  const server = await startBenchServer(
    'servers/relay-without-worker.js',
    { ...buildRelayEnv(), DATA_DIR: path.join(dir, 'data'), HOST: '127.0.0.1' },
    [...readStartNodeFlags(), '--cpu-prof', `--cpu-prof-dir=${dir}`],
  );
  try {
    await runLoad({
      url: server.url,
      connections: s.connections,
      durationSeconds: s.durationSeconds,
      secret: BENCH_SECRET,
      firstId: nextId,
    });
    nextId += 1_000_000;
  } finally {
    await server.stop();
  }
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the relay wrote no CPU profile');
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
  const share = (pkg: string) => computeInclusiveShare(profile, (url) => url.includes(`/node_modules/${pkg}/`));
  const inclusive = ['better-sqlite3', 'express', 'body-parser', 'zod', 'pino']
    .map((pkg) => `${pkg} ${(share(pkg) * 100).toFixed(0)}%`)
    .join(', ');
  const self = summarizeSelfTime(profile, 8)
    .map(([name, v]) => `${name} ${(v * 100).toFixed(0)}%`)
    .join(', ');
  return { sqliteShare: share('better-sqlite3'), summary: `inclusive: ${inclusive}; self time: ${self} (start-up included)` };
}

function best(results: LoadResult[]): LoadResult {
  return results.reduce((a, b) => (b.okPerSecond > a.okPerSecond ? b : a));
}

/**
 * Ingest: signed, validated, durably committed deliveries per second and the ack latency, next to
 * a bare Express 5 app and plain node:http on the same bodies, connections and duration.
 *
 * The relay under test is its real app, store and logger (bench/servers/relay-without-worker: the
 * same createRelay `serve` uses, LOG_LEVEL=warn, SQLite synchronous=FULL) with the delivery worker
 * not started, so the figure is the ack path and not rendering; the worker's cost is measured by
 * the end-to-end benchmark. Every stored row is counted afterwards: each 2xx must be a row.
 */
export const ingestBenchmark: Benchmark = {
  id: 'ingest',
  title: 'Ingest: signed, validated, durably committed deliveries vs bare Express and node:http',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const s: IngestSettings = ctx.quick
      ? { connections: 4, durationSeconds: 1, warmupSeconds: 0, rounds: 1 }
      : { connections: 32, durationSeconds: 6, warmupSeconds: 2, rounds: 2 };
    const runs: Record<'http' | 'express' | 'relay' | 'relayNormal', LoadResult[]> = { http: [], express: [], relay: [], relayNormal: [] };
    let stored = 0;
    let acked = 0;
    for (let round = 0; round < s.rounds; round++) {
      for (const which of ['relay', 'express', 'http', 'relayNormal'] as const) {
        if (which === 'relay' || which === 'relayNormal') {
          const dataDir = path.join(ctx.tmpDir, `${which}-${round}`);
          const server = await startBenchServer(
            'servers/relay-without-worker.js',
            {
              ...buildRelayEnv({ SQLITE_SYNCHRONOUS: which === 'relay' ? 'FULL' : 'NORMAL' }),
              DATA_DIR: dataDir,
              HOST: '127.0.0.1',
            },
            readStartNodeFlags(),
          );
          try {
            const { measured, okTotal } = await loadServer(server.url, s);
            runs[which].push(measured);
            acked += okTotal;
          } finally {
            await server.stop();
          }
          stored += countStoredRows(dataDir);
        } else {
          const server = await startBenchServer(which === 'express' ? 'servers/baseline-express.js' : 'servers/baseline-http.js', {});
          try {
            runs[which].push((await loadServer(server.url, s)).measured);
          } finally {
            await server.stop();
          }
        }
        const r = runs[which].at(-1)!;
        ctx.log(
          `round ${round + 1} ${which}: ${r.okPerSecond.toFixed(0)}/s p50 ${r.latencyP50Ms} ms p99 ${r.latencyP99Ms} ms ${describeFailures(r)}`,
        );
      }
    }
    const profile = ctx.quick ? undefined : await profileRelay(ctx, s);
    const relay = best(runs.relay);
    const relayNormal = best(runs.relayNormal);
    const express = best(runs.express);
    const http = best(runs.http);
    const setting = `${s.connections} connections, ${s.durationSeconds} s, ${relay.bodyBytes}-byte NetBox 4.6 bodies, HMAC-SHA512 signed, distinct report ids, best of ${s.rounds}`;
    const failures = describeFailures(relay);
    return [
      {
        name: 'deliveries/s (202, committed, synchronous=FULL)',
        value: relay.okPerSecond,
        unit: 'req/s',
        baseline: { name: 'bare Express 5 + express.json()', value: express.okPerSecond },
        target: { kind: 'ratio-at-least', ratio: 0.8 },
        note: `${setting}; ${stored >= acked ? `every 2xx is a stored row (${acked} answers, ${stored} rows: ${stored - acked} more committed as the load stopped, warm-ups included)` : `STORED ROWS ${stored} < 2xx ANSWERS ${acked}: ACKNOWLEDGED DELIVERIES LOST`}${failures ? `; failures: ${failures}` : ''}`,
      },
      {
        name: 'deliveries/s with synchronous=NORMAL (informational)',
        value: relayNormal.okPerSecond,
        unit: 'req/s',
        baseline: { name: 'bare Express 5 + express.json()', value: express.okPerSecond },
        note: "the same relay with SQLITE_SYNCHRONOUS=NORMAL: WAL is fsynced at checkpoints only, so an ack survives a process crash but not a power cut; the gap to FULL is the wait for each batch's WAL fsync (run on the thread pool, not on the event loop)",
      },
      {
        name: 'deliveries/s vs node:http ceiling',
        value: relay.okPerSecond,
        unit: 'req/s',
        baseline: { name: 'plain node:http', value: http.okPerSecond },
      },
      ...(profile
        ? [
            {
              name: 'relay CPU profile under this load (ack path)',
              value: profile.sqliteShare * 100,
              unit: '% in better-sqlite3',
              note: `V8 CPU profile of the relay during one more ${s.durationSeconds} s run (the event loop's samples; the WAL fsync runs on libuv's thread pool, outside them): ${profile.summary}`,
            },
          ]
        : []),
      {
        name: 'ack latency p50',
        value: relay.latencyP50Ms,
        unit: 'ms',
        baseline: { name: 'bare Express p50', value: express.latencyP50Ms },
        note: `autocannon, 1 ms resolution; node:http p50 ${http.latencyP50Ms} ms`,
      },
      {
        name: 'ack latency p99',
        value: relay.latencyP99Ms,
        unit: 'ms',
        baseline: { name: 'bare Express p99', value: express.latencyP99Ms },
        note: `node:http p99 ${http.latencyP99Ms} ms`,
      },
    ];
  },
};

import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE_NAME } from '../src/store';
import { describeFailures, runLoad, type LoadResult } from './lib/load';
import { findFreePort, forkBenchScript, stopChild, waitForMessage } from './lib/processes';
import type { Benchmark, BenchContext, Figure } from './lib/types';

const SECRET = 'bench-webhook-secret-0123456789';

export interface IngestSettings {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Each server is measured this many times, alternating, and its best run kept (least disturbed by neighbours). */
  rounds: number;
}

/** Starts one of the bench/servers scripts on a free port and returns its webhook URL. */
async function startServer(script: string, env: Record<string, string>) {
  const port = await findFreePort();
  const child = forkBenchScript(script, { env: { ...env, PORT: String(port) } });
  await waitForMessage(child, 'ready');
  return { url: `http://127.0.0.1:${port}/webhook`, stop: () => stopChild(child) };
}

let nextId = 1_000_000;

/** Warm-up (not counted), then the measured load; every request a new report id. */
async function loadServer(url: string, s: IngestSettings): Promise<{ measured: LoadResult; okTotal: number }> {
  let okTotal = 0;
  if (s.warmupSeconds > 0) {
    okTotal += (await runLoad({ url, connections: s.connections, durationSeconds: s.warmupSeconds, secret: SECRET, firstId: nextId })).ok;
    nextId += 1_000_000;
  }
  const measured = await runLoad({ url, connections: s.connections, durationSeconds: s.durationSeconds, secret: SECRET, firstId: nextId });
  nextId += 1_000_000;
  return { measured, okTotal: okTotal + measured.ok };
}

/** Rows the relay committed, read from its SQLite file after it stopped. */
function countStoredRows(dataDir: string): number {
  const db = new Database(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM deliveries').get() as { n: number }).n;
  } finally {
    db.close();
  }
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
      : { connections: 32, durationSeconds: 8, warmupSeconds: 2, rounds: 2 };
    const runs: Record<'http' | 'express' | 'relay', LoadResult[]> = { http: [], express: [], relay: [] };
    let stored = 0;
    let acked = 0;
    for (let round = 0; round < s.rounds; round++) {
      for (const which of ['relay', 'express', 'http'] as const) {
        if (which === 'relay') {
          const dataDir = path.join(ctx.tmpDir, `relay-${round}`);
          const server = await startServer('servers/relay-without-worker.js', {
            DATA_DIR: dataDir,
            WEBHOOK_SECRET: SECRET,
            SQLITE_SYNCHRONOUS: 'FULL',
            LOG_LEVEL: 'warn',
            HOST: '127.0.0.1',
          });
          try {
            const { measured, okTotal } = await loadServer(server.url, s);
            runs.relay.push(measured);
            acked += okTotal;
          } finally {
            await server.stop();
          }
          stored += countStoredRows(dataDir);
        } else {
          const server = await startServer(which === 'express' ? 'servers/baseline-express.js' : 'servers/baseline-http.js', {});
          try {
            runs[which].push((await loadServer(server.url, s)).measured);
          } finally {
            await server.stop();
          }
        }
        const r = runs[which].at(-1)!;
        ctx.log(`round ${round + 1} ${which}: ${r.okPerSecond.toFixed(0)}/s p50 ${r.latencyP50Ms} ms p99 ${r.latencyP99Ms} ms ${describeFailures(r)}`);
      }
    }
    const relay = best(runs.relay);
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
        note: `${setting}; ${stored === acked ? `every 2xx is a stored row (${stored} rows, warm-ups included)` : `STORED ROWS ${stored} ≠ 2xx ANSWERS ${acked}`}${failures ? `; failures: ${failures}` : ''}`,
      },
      { name: 'deliveries/s vs node:http ceiling', value: relay.okPerSecond, unit: 'req/s', baseline: { name: 'plain node:http', value: http.okPerSecond } },
      { name: 'ack latency p50', value: relay.latencyP50Ms, unit: 'ms', baseline: { name: 'bare Express p50', value: express.latencyP50Ms }, note: `autocannon, 1 ms resolution; node:http p50 ${http.latencyP50Ms} ms` },
      { name: 'ack latency p99', value: relay.latencyP99Ms, unit: 'ms', baseline: { name: 'bare Express p99', value: express.latencyP99Ms }, note: `node:http p99 ${http.latencyP99Ms} ms` },
    ];
  },
};

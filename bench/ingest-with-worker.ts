import path from 'node:path';
import { describeFailures, runLoad, type LoadResult } from './lib/load';
import { findFreePort, startBenchServer, startRelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv, countStoredRows } from './lib/relay-env';
import { startSmtpSink } from './lib/smtp-sink';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/** Issue 16's targets for the durable ack path of `serve`, worker on. */
const REFUSING_RATIO_TARGET = 0.9;
const MAILING_RATIO_TARGET = 0.5;
/** The ack path first by construction: p99 while the worker mails within this multiple of bare Express's p99. */
const MAILING_ACK_P99_RATIO_TARGET = 1.5;
/** Many senders at once: the relay acknowledges while it mails at least this multiple of a script that mails inside the request. */
const MANY_SENDERS_RATIO_TARGET = 1.2;
const MANY_SENDERS = 64;

interface Settings {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
}

type Which = 'express' | 'refusing' | 'mailing' | 'many' | 'script';

interface RunResult {
  load: LoadResult;
  /** Mails the sink accepted during the measured load (mailing only). */
  mailed?: number;
  acked: number;
  stored?: number;
}

let nextId = 40_000_000;

/** Warm-up (not counted), then the measured load; every request a new report id. */
async function loadServer(url: string, s: Settings): Promise<{ load: LoadResult; acked: number }> {
  const warm =
    s.warmupSeconds > 0
      ? await runLoad({
          url,
          connections: s.connections,
          durationSeconds: s.warmupSeconds,
          secret: BENCH_SECRET,
          firstId: (nextId += 1_000_000),
        })
      : undefined;
  const load = await runLoad({
    url,
    connections: s.connections,
    durationSeconds: s.durationSeconds,
    secret: BENCH_SECRET,
    firstId: (nextId += 1_000_000),
  });
  return { load, acked: load.ok + (warm?.ok ?? 0) };
}

/** `serve` with SMTP refusing (a closed loopback port) or mailing to a sink in its own process. */
async function measureRelay(ctx: BenchContext, which: 'refusing' | 'mailing', round: number, s: Settings): Promise<RunResult> {
  const dataDir = path.join(ctx.tmpDir, `${which}-${round}`);
  const sink = which === 'mailing' ? await startSmtpSink() : undefined;
  try {
    const smtpUrl = sink?.url ?? `smtp://127.0.0.1:${await findFreePort()}`;
    const relay = await startRelayProcess({ dataDir, env: buildRelayEnv({ SMTP_URL: smtpUrl }) });
    let result: RunResult;
    try {
      const { load, acked } = await loadServer(relay.webhookUrl, s);
      // Mails accepted while the measured load ran: the worker's share of the same two cores.
      const mailed = sink
        ? (await sink.arrivals()).filter(([, at]) => at >= load.startedAt && at <= load.startedAt + load.durationSeconds * 1000).length
        : undefined;
      result = { load, acked, mailed };
    } finally {
      await relay.stop();
    }
    return { ...result, stored: countStoredRows(dataDir) };
  } finally {
    await sink?.stop();
  }
}

/** The hand-written alternative (bench/servers/send-in-request): each webhook mailed inside its request, to a sink in its own process. */
async function measureSendInRequest(s: Settings): Promise<RunResult> {
  const sink = await startSmtpSink();
  try {
    const server = await startBenchServer('servers/send-in-request.js', buildRelayEnv({ SMTP_URL: sink.url }));
    try {
      const { load, acked } = await loadServer(server.url, s);
      return { load, acked };
    } finally {
      await server.stop();
    }
  } finally {
    await sink.stop();
  }
}

async function measureExpress(s: Settings): Promise<RunResult> {
  const server = await startBenchServer('servers/baseline-express.js', {});
  try {
    const { load, acked } = await loadServer(server.url, s);
    return { load, acked };
  } finally {
    await server.stop();
  }
}

function best(results: RunResult[]): RunResult {
  return results.reduce((a, b) => (b.load.okPerSecond > a.load.okPerSecond ? b : a));
}

/**
 * Durable ingest with the worker on, as a user runs it (`serve`, SQLite synchronous=FULL): once with
 * SMTP refusing every connection (the breaker paused, the worker probing), once while the worker
 * mails everything it takes in to a real smtp-server in its own process, each next to a bare
 * Express 5 app on the same bodies, connections and duration, alternating, best of the rounds.
 * Every stored row is counted afterwards: each 2xx must be a row.
 */
export const ingestWithWorkerBenchmark: Benchmark = {
  id: 'ingest-worker',
  title: 'Ingest with the worker on: SMTP refusing, and while mailing everything, vs bare Express',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const s: Settings = ctx.quick
      ? { connections: 4, durationSeconds: 1, warmupSeconds: 0, rounds: 1 }
      : { connections: 32, durationSeconds: 6, warmupSeconds: 2, rounds: 2 };
    const runs: Record<Which, RunResult[]> = { express: [], refusing: [], mailing: [], many: [], script: [] };
    const many = { ...s, connections: ctx.quick ? s.connections : MANY_SENDERS };
    const measure = (which: Which, round: number): Promise<RunResult> => {
      if (which === 'express') return measureExpress(s);
      if (which === 'script') return measureSendInRequest(many);
      if (which === 'many') return measureRelay(ctx, 'mailing', round + s.rounds, many);
      return measureRelay(ctx, which, round, s);
    };
    for (let round = 0; round < s.rounds; round++) {
      for (const which of ['refusing', 'express', 'mailing', 'script', 'many'] as const) {
        const r = await measure(which, round);
        runs[which].push(r);
        ctx.log(
          `round ${round + 1} ${which}: ${r.load.okPerSecond.toFixed(0)}/s p50 ${r.load.latencyP50Ms} ms p99 ${r.load.latencyP99Ms} ms${r.mailed !== undefined ? `, ${r.mailed} mailed meanwhile` : ''} ${describeFailures(r.load)}`,
        );
      }
    }
    return [...buildFigures(runs, s), buildManySendersFigure(runs, many)];
  },
};

/** Whether every acknowledged delivery was stored; rows beyond the 2xx count are requests committed after the load generator stopped counting. */
function describeStored(results: RunResult[]): string {
  const acked = results.reduce((n, r) => n + r.acked, 0);
  const stored = results.reduce((n, r) => n + (r.stored ?? 0), 0);
  if (stored < acked) return `STORED ROWS ${stored} < 2xx ANSWERS ${acked}: ACKNOWLEDGED DELIVERIES LOST`;
  return `every 2xx is a stored row (${acked} answers, ${stored} rows: ${stored - acked} more committed as the load stopped, warm-ups included)`;
}

function buildFigures(runs: Record<Which, RunResult[]>, s: Settings): Figure[] {
  const express = best(runs.express).load;
  const refusing = best(runs.refusing);
  const mailing = best(runs.mailing);
  const baseline = { name: 'bare Express 5 + express.json()', value: express.okPerSecond };
  const setting = `\`serve\`, ${s.connections} connections, ${s.durationSeconds} s after ${s.warmupSeconds} s warm-up, signed NetBox 4.6 bodies, SQLite synchronous=FULL, best of ${s.rounds} alternating with bare Express`;
  const failures = (r: RunResult) => (describeFailures(r.load) ? `; failures: ${describeFailures(r.load)}` : '');
  const mailRate = (mailing.mailed ?? 0) / s.durationSeconds;
  return [
    {
      name: 'deliveries/s, worker on, SMTP refusing',
      value: refusing.load.okPerSecond,
      unit: 'req/s',
      baseline,
      target: { kind: 'ratio-at-least', ratio: REFUSING_RATIO_TARGET },
      note: `${setting}; SMTP_URL at a closed loopback port; ack p50 ${refusing.load.latencyP50Ms} ms, p99 ${refusing.load.latencyP99Ms} ms; ${describeStored(runs.refusing)}${failures(refusing)}`,
    },
    {
      name: 'deliveries/s while the worker mails',
      value: mailing.load.okPerSecond,
      unit: 'req/s',
      baseline,
      target: { kind: 'ratio-at-least', ratio: MAILING_RATIO_TARGET },
      note: `${setting}; SMTP is smtp-server in its own process, which accepted ${mailing.mailed} mails during the measured ${s.durationSeconds} s (${mailRate.toFixed(0)} mails/s); ${describeStored(runs.mailing)}${failures(mailing)}`,
    },
    {
      name: 'ack latency p99 while the worker mails',
      value: mailing.load.latencyP99Ms,
      unit: 'ms',
      baseline: { name: 'bare Express p99', value: express.latencyP99Ms },
      target: { kind: 'ratio-at-most', ratio: MAILING_ACK_P99_RATIO_TARGET },
      note: `autocannon, 1 ms resolution, closed loop at ${s.connections} connections; p50 ${mailing.load.latencyP50Ms} ms (bare Express ${express.latencyP50Ms} ms)`,
    },
  ];
}

function buildManySendersFigure(runs: Record<Which, RunResult[]>, s: Settings): Figure {
  const relay = best(runs.many);
  const script = best(runs.script).load;
  return {
    name: `acknowledgements/s at ${s.connections} senders while the worker mails`,
    value: relay.load.okPerSecond,
    unit: 'req/s',
    baseline: {
      name: 'a script that mails inside the request (Express, signature, Handlebars, nodemailer; nothing stored)',
      value: script.okPerSecond,
    },
    target: { kind: 'ratio-at-least', ratio: MANY_SENDERS_RATIO_TARGET },
    note: `\`serve\` mailing to smtp-server in its own process (${relay.mailed} mails accepted during the measured ${s.durationSeconds} s), ${s.connections} connections, ${s.durationSeconds} s after ${s.warmupSeconds} s warm-up, best of ${s.rounds} alternating with the script (its own sink); ack p99 ${relay.load.latencyP99Ms} ms, the script's ${script.latencyP99Ms} ms; ${describeStored(runs.many)}`,
  };
}

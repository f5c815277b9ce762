import path from 'node:path';
import { signBody } from '../src/webhook';
import { runLoad } from './lib/load';
import { askChild, forkBenchScript, startRelayProcess, stopChild, waitForMessage } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv } from './lib/relay-env';
import { startSmtpSink, type SmtpSink } from './lib/smtp-sink';
import { computePercentile, sleep } from './lib/stats';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { createBodyFactory } from './lib/webhook-bodies';

/** POSTs one signed body like NetBox and returns when the relay answered. */
async function postSigned(url: string, body: Buffer): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hook-signature': signBody(body, BENCH_SECRET) },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Sends `count` pre-rendered messages through nodemailer alone (bench/servers/nodemailer-push) to
 * the sink and returns mails/s, timed by the pusher from its first send to its last answer.
 */
async function pushWithNodemailer(o: { sink: SmtpSink; env: Record<string, string>; count: number; firstId: number; stock: boolean; label: string; log: (m: string) => void }): Promise<number> {
  const pusher = forkBenchScript('servers/nodemailer-push.js');
  try {
    await waitForMessage(pusher, 'ready');
    const before = (await o.sink.stats()).count;
    const result = await askChild<{ elapsedMs: number; sent: number; failed: number; error?: string }>(pusher, { type: 'run', env: o.env, count: o.count, firstId: o.firstId, stock: o.stock }, 'result', 600_000);
    if (result.error || result.failed) throw new Error(`${o.label} failed: ${result.error ?? `${result.failed} failed`}`);
    const done = await o.sink.waitForCount(before + o.count, 60_000);
    const rate = o.count / (result.elapsedMs / 1000);
    o.log(`${o.label}: ${o.count} mails in ${result.elapsedMs} ms (${rate.toFixed(0)}/s), sink saw ${done.count - before}`);
    return rate;
  } finally {
    await stopChild(pusher);
  }
}

/**
 * End to end: webhooks in → mails accepted by a real smtp-server (its own process), through the
 * real relay (`node dist/src/main.js serve`, SQLite synchronous=FULL, pool of 5), next to
 * nodemailer alone pushing the same messages, rendered beforehand, through the same transport
 * settings to the same server. Then the latency from POST to SMTP-accepted at low load.
 */
export const endToEndBenchmark: Benchmark = {
  id: 'end-to-end',
  title: 'End to end: webhook in → SMTP accepted, vs nodemailer alone',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const count = ctx.quick ? 10 : 500;
    const latencyCount = ctx.quick ? 5 : 100;
    const latencyRatePerSecond = 10;
    const sink = await startSmtpSink();
    const env = buildRelayEnv({ SMTP_URL: sink.url });
    try {
      // The relay: throughput first, then latency at low load, on the same process.
      const relay = await startRelayProcess({ dataDir: path.join(ctx.tmpDir, 'relay'), env });
      let relayRate: number;
      let latencies: number[];
      try {
        const before = (await sink.stats()).count;
        const load = await runLoad({ url: relay.webhookUrl, connections: 8, amount: count, secret: BENCH_SECRET, firstId: 1 });
        if (load.ok !== count) throw new Error(`the relay acknowledged ${load.ok} of ${count} webhooks: ${JSON.stringify(load.statusCodes)}`);
        const done = await sink.waitForCount(before + count, 600_000);
        relayRate = count / ((done.lastAt - load.startedAt) / 1000);
        ctx.log(`relay: ${count} mails in ${done.lastAt - load.startedAt} ms (${relayRate.toFixed(0)}/s); ingest alone took ${(load.durationSeconds * 1000).toFixed(0)} ms`);

        const bodies = createBodyFactory({ firstId: 500_000 });
        const sentAt = new Map<number, number>();
        const start = Date.now();
        for (let i = 0; i < latencyCount; i++) {
          await sleep(Math.max(0, start + (i * 1000) / latencyRatePerSecond - Date.now()));
          const { id, body } = bodies.next();
          sentAt.set(id, Date.now());
          const status = await postSigned(relay.webhookUrl, body);
          if (status !== 202) throw new Error(`webhook answered ${status}`);
        }
        await sink.waitForCount(before + count + latencyCount, 60_000);
        latencies = (await sink.arrivals()).filter(([id]) => sentAt.has(id)).map(([id, at]) => at - sentAt.get(id)!);
      } finally {
        await relay.stop();
      }

      // The baseline: the same transport, pool and messages, with no relay in front.
      const push = { sink, env: { ...env, DATA_DIR: ctx.tmpDir }, count, log: ctx.log };
      const baselineRate = await pushWithNodemailer({ ...push, label: 'nodemailer alone', firstId: 1_000_000, stock: false });
      // Context, not the target: nodemailer with its defaults, as a hand-written script would send.
      const stockRate = await pushWithNodemailer({ ...push, label: 'stock nodemailer (defaults)', firstId: 2_000_000, stock: true });

      return [
        {
          name: 'mails accepted/s, webhook in → SMTP accepted',
          value: relayRate,
          unit: 'mails/s',
          baseline: { name: 'nodemailer alone, same transport (TCP_NODELAY), pre-rendered, pool 5', value: baselineRate },
          target: { kind: 'ratio-at-least', ratio: 0.7 },
          note: `${count} signed webhooks (8 connections) into \`serve\`, timed from the first POST to the ${count}th mail accepted by smtp-server in another process; the baseline sends the same number of messages rendered before its clock starts`,
        },
        {
          name: 'mails accepted/s vs stock nodemailer (informational)',
          value: relayRate,
          unit: 'mails/s',
          baseline: { name: 'nodemailer defaults (Nagle on), pre-rendered, pool 5', value: stockRate },
          note: 'what a hand-written nodemailer script sends at: its pooled connections wait up to 40 ms per mail for a delayed ACK (the relay sets TCP_NODELAY, and so does the baseline above)',
        },
        {
          name: 'webhook → SMTP accepted latency p50',
          value: computePercentile(latencies, 50),
          unit: 'ms',
          target: { kind: 'at-most', value: 50 },
          note: `${latencies.length} webhooks at ${latencyRatePerSecond}/s, POST sent → smtp-server accepted (Date.now() in both processes)`,
        },
        { name: 'webhook → SMTP accepted latency p99', value: computePercentile(latencies, 99), unit: 'ms' },
      ];
    } finally {
      await sink.stop();
    }
  },
};

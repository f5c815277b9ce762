import path from 'node:path';
import { describeFailures, runLoad } from './lib/load';
import { findFreePort, startBenchServer, startRelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv } from './lib/relay-env';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/** One second of warm-up (so the figure is not the JIT's), then the measured paced load. */
async function pacedLoad(url: string, ratePerSecond: number, durationSeconds: number) {
  await runLoad({ url, connections: 10, durationSeconds: 1, overallRate: ratePerSecond, secret: BENCH_SECRET, firstId: 1 });
  return runLoad({ url, connections: 10, durationSeconds, overallRate: ratePerSecond, secret: BENCH_SECRET, firstId: 100_000 });
}

/** The same paced load on the bare Express baseline: what the load and the machine cost by themselves. */
async function measureBareExpress(ratePerSecond: number, durationSeconds: number) {
  const server = await startBenchServer('servers/baseline-express.js', {});
  try {
    return await pacedLoad(server.url, ratePerSecond, durationSeconds);
  } finally {
    await server.stop();
  }
}

/**
 * Ack under outage: the real relay (`serve`) with SMTP_URL pointing at a loopback port where
 * nothing listens (every connection refused), taking webhooks at a fixed 200/s. The worker keeps
 * claiming, composing and failing deliveries meanwhile; the sender must not notice. The same paced
 * load on a bare Express app is the baseline.
 */
export const ackUnderOutageBenchmark: Benchmark = {
  id: 'ack-under-outage',
  title: 'Ack latency at 200 deliveries/s while SMTP refuses connections',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const ratePerSecond = 200;
    const durationSeconds = ctx.quick ? 1 : 10;
    const closedPort = await findFreePort();
    const relay = await startRelayProcess({
      dataDir: path.join(ctx.tmpDir, 'relay'),
      env: buildRelayEnv({ SMTP_URL: `smtp://127.0.0.1:${closedPort}` }),
    });
    let load;
    let refusals: number;
    try {
      load = await pacedLoad(relay.webhookUrl, ratePerSecond, durationSeconds);
      refusals = (relay.output().match(/send failed; will retry/g) ?? []).length;
    } finally {
      await relay.stop();
    }
    const failures = describeFailures(load);
    ctx.log(
      `${load.ok} acks at ${load.okPerSecond.toFixed(0)}/s; p50 ${load.latencyP50Ms} ms, p99 ${load.latencyP99Ms} ms, max ${load.latencyMaxMs} ms; ${failures || 'no failures'}`,
    );
    // After the relay stopped, so that its worker does not disturb the baseline.
    const bare = await measureBareExpress(ratePerSecond, durationSeconds);
    ctx.log(`bare Express at the same pace: p50 ${bare.latencyP50Ms} ms, p99 ${bare.latencyP99Ms} ms, max ${bare.latencyMaxMs} ms`);
    const note = `${load.ok} webhooks at ${ratePerSecond}/s for ${durationSeconds} s (open-loop pacing, up to 10 keep-alive connections, timed to 0.01 ms) into \`serve\` with SMTP refusing; achieved ${load.okPerSecond.toFixed(0)}/s${failures ? `; failures: ${failures}` : ''}; the relay logged ${refusals} refused sends meanwhile (LOG_LEVEL=warn)`;
    return [
      {
        name: 'ack latency p99 at 200/s, SMTP down',
        value: load.latencyP99Ms,
        unit: 'ms',
        baseline: { name: 'bare Express p99, same pace', value: bare.latencyP99Ms },
        target: { kind: 'at-most', value: 10 },
        note,
      },
      {
        name: 'ack latency p50 at 200/s, SMTP down',
        value: load.latencyP50Ms,
        unit: 'ms',
        baseline: { name: 'bare Express p50, same pace', value: bare.latencyP50Ms },
      },
      {
        name: 'ack latency max at 200/s, SMTP down',
        value: load.latencyMaxMs,
        unit: 'ms',
        baseline: { name: 'bare Express max, same pace', value: bare.latencyMaxMs },
      },
    ];
  },
};

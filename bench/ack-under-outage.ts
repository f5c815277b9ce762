import path from 'node:path';
import { describeFailures, runLoad } from './lib/load';
import { findFreePort, startRelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv } from './lib/relay-env';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/**
 * Ack under outage: the real relay (`serve`) with SMTP_URL pointing at a loopback port where
 * nothing listens (every connection refused), taking webhooks at a fixed 200/s. The worker keeps
 * claiming, composing and failing deliveries meanwhile; the sender must not notice.
 */
export const ackUnderOutageBenchmark: Benchmark = {
  id: 'ack-under-outage',
  title: 'Ack latency at 200 deliveries/s while SMTP refuses connections',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const ratePerSecond = 200;
    const durationSeconds = ctx.quick ? 1 : 10;
    const closedPort = await findFreePort();
    const relay = await startRelayProcess({ dataDir: path.join(ctx.tmpDir, 'relay'), env: buildRelayEnv({ SMTP_URL: `smtp://127.0.0.1:${closedPort}` }) });
    try {
      // A second of warm-up so the figure is not the JIT's.
      await runLoad({ url: relay.webhookUrl, connections: 10, durationSeconds: 1, overallRate: ratePerSecond, secret: BENCH_SECRET, firstId: 1 });
      const load = await runLoad({ url: relay.webhookUrl, connections: 10, durationSeconds, overallRate: ratePerSecond, secret: BENCH_SECRET, firstId: 100_000 });
      const failures = describeFailures(load);
      const refusals = (relay.output().match(/send failed; will retry/g) ?? []).length;
      ctx.log(`${load.ok} acks at ${load.okPerSecond.toFixed(0)}/s; p50 ${load.latencyP50Ms} ms, p99 ${load.latencyP99Ms} ms, max ${load.latencyMaxMs} ms; ${failures || 'no failures'}`);
      const note = `${load.ok} webhooks at ${ratePerSecond}/s for ${durationSeconds} s over 10 connections (autocannon overallRate, 1 ms resolution) into \`serve\` with SMTP refusing; achieved ${load.okPerSecond.toFixed(0)}/s${failures ? `; failures: ${failures}` : ''}; the relay logged ${refusals} refused sends meanwhile (LOG_LEVEL=warn)`;
      return [
        { name: 'ack latency p99 at 200/s, SMTP down', value: load.latencyP99Ms, unit: 'ms', target: { kind: 'at-most', value: 10 }, note },
        { name: 'ack latency p50 at 200/s, SMTP down', value: load.latencyP50Ms, unit: 'ms' },
        { name: 'ack latency max at 200/s, SMTP down', value: load.latencyMaxMs, unit: 'ms' },
      ];
    } finally {
      await relay.stop();
    }
  },
};

import path from 'node:path';
import { runLoad } from './lib/load';
import { findFreePort, readMemoryMb, startRelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv } from './lib/relay-env';
import { startSmtpSink, type SmtpSink } from './lib/smtp-sink';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/** Issue 16: the whole burst (20,000 queued, then drained) within this peak RSS. */
const PEAK_RSS_TARGET_MB = 150;

/** Bounds that keep `npm run bench` finite on a crowded machine. */
const INGEST_BOUND_SECONDS = 180;
const DRAIN_BOUND_SECONDS = 240;
/** The relay's paused queue probes the server again after its backoff (minutes after a long outage). */
const PROBE_BOUND_SECONDS = 600;

/**
 * Burst: a backlog built while SMTP is down, then SMTP comes back. Peak RSS of the relay process
 * (VmHWM), the RSS slope per 10,000 queued deliveries (bodies must stay on disk: the worker loads
 * only the rows it claims), and the time to drain the backlog once the relay's probe finds the SMTP server back
 * (from the first mail accepted to the last, so that the drain measures the relay, not the pause's backoff).
 */
export const burstBenchmark: Benchmark = {
  id: 'burst',
  title: 'Burst: backlog while SMTP is down, then drain',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const total = ctx.quick ? 40 : 20_000;
    const first = Math.round(total / 10);
    const smtpPort = await findFreePort();
    const relay = await startRelayProcess({
      dataDir: path.join(ctx.tmpDir, 'relay'),
      env: buildRelayEnv({ SMTP_URL: `smtp://127.0.0.1:${smtpPort}` }),
    });
    let sink: SmtpSink | undefined;
    try {
      const idle = readMemoryMb(relay.pid).rssMb;
      // Bounded in count and in time: on a crowded machine the backlog may stay smaller than asked.
      const a = await runLoad({
        url: relay.webhookUrl,
        connections: 16,
        amount: first,
        durationSeconds: INGEST_BOUND_SECONDS,
        secret: BENCH_SECRET,
        firstId: 1,
      });
      const afterFirst = readMemoryMb(relay.pid).rssMb;
      const b = await runLoad({
        url: relay.webhookUrl,
        connections: 16,
        amount: total - first,
        durationSeconds: INGEST_BOUND_SECONDS,
        secret: BENCH_SECRET,
        firstId: 1_000_000,
      });
      const afterAll = readMemoryMb(relay.pid);
      const acked = a.ok + b.ok;
      if (acked < total)
        ctx.log(`only ${acked} of ${total} acknowledged within the time bound: ${JSON.stringify({ ...a.statusCodes, ...b.statusCodes })}`);
      const slopePer10k = ((afterAll.rssMb - afterFirst) / Math.max(1, b.ok)) * 10_000;
      ctx.log(
        `backlog of ${acked}: RSS idle ${idle.toFixed(0)} MB, after ${a.ok} ${afterFirst.toFixed(0)} MB, after ${acked} ${afterAll.rssMb.toFixed(0)} MB (peak ${afterAll.peakRssMb.toFixed(0)} MB)`,
      );

      const sinkStarted = Date.now();
      sink = await startSmtpSink(smtpPort);
      const { firstAt } = await sink.waitForCount(1, PROBE_BOUND_SECONDS * 1000);
      const probeSeconds = (firstAt - sinkStarted) / 1000;
      let drained = acked;
      let lastAt: number;
      try {
        lastAt = (await sink.waitForCount(acked, DRAIN_BOUND_SECONDS * 1000)).lastAt;
      } catch {
        const stats = await sink.stats();
        drained = stats.count;
        lastAt = stats.lastAt || Date.now();
        ctx.log(`drain bound of ${DRAIN_BOUND_SECONDS} s reached with ${drained} of ${acked} mails accepted`);
      }
      const drainSeconds = (lastAt - firstAt) / 1000;
      const drainedMemory = readMemoryMb(relay.pid);
      const peak = drainedMemory.peakRssMb;
      // Of the RSS, the file-backed pages are node's binary and the native modules (an idle `node` alone is ~40 MB).
      const split = `RSS after the drain ${drainedMemory.rssMb.toFixed(0)} MB: ${drainedMemory.anonMb.toFixed(0)} MB anonymous, ${drainedMemory.fileMb.toFixed(0)} MB mapped files`;
      ctx.log(
        `probe after ${probeSeconds.toFixed(1)} s, drained ${drained} in ${drainSeconds.toFixed(1)} s; peak RSS ${peak.toFixed(0)} MB; ${split}`,
      );
      const complete = drained === acked && acked === total;
      return [
        {
          name: `peak RSS, ${acked.toLocaleString('en-US')} queued then drained`,
          value: peak,
          unit: 'MB',
          // The same process at rest before the burst: what the backlog and its drain add.
          baseline: { name: 'the same relay at rest, before the burst', value: idle },
          // Judged only for the whole burst: a smaller backlog would flatter it.
          ...(complete ? { target: { kind: 'at-most' as const, value: PEAK_RSS_TARGET_MB } } : {}),
          note: `VmHWM of the \`serve\` process over the whole burst; RSS idle ${idle.toFixed(0)} MB, after ${a.ok} queued ${afterFirst.toFixed(0)} MB, after ${acked} ${afterAll.rssMb.toFixed(0)} MB; ${split}${complete ? '' : `; INCOMPLETE: ${acked} of ${total} acknowledged and ${drained} drained within the bounds`}`,
        },
        {
          name: 'RSS growth per 10,000 queued',
          value: slopePer10k,
          unit: 'MB',
          note: 'between 10% and 100% of the backlog; the backlog itself lives in SQLite, not in memory',
        },
        {
          name: 'ingest rate while SMTP down (burst)',
          value: b.okPerSecond,
          unit: 'req/s',
          note: '16 connections, as fast as the relay acknowledges, worker retrying meanwhile',
        },
        {
          name: `drain time, ${drained.toLocaleString('en-US')} mails`,
          value: drainSeconds,
          unit: 's',
          note: `from the first mail accepted (the paused queue's probe, ${probeSeconds.toFixed(0)} s after the SMTP server started) to the last (${(drained / drainSeconds).toFixed(0)} mails/s); pool of 5${drained < acked ? `; stopped at the ${DRAIN_BOUND_SECONDS} s bound with ${acked - drained} still queued` : ''}`,
        },
      ];
    } finally {
      await relay.stop();
      await sink?.stop();
    }
  },
};

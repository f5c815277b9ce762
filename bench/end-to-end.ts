import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { computeInclusiveShare, readCpuProfileDir, summarizeSelfTime, summarizeTopFrames } from './lib/cpu-profile';
import { runLoad } from './lib/load';
import { readCpuMs, startBenchServer, startRelayProcess, type RelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv } from './lib/relay-env';
import { captureRelayMail, measureSmtpFloor, postSigned } from './lib/smtp-floor';
import { startSmtpSink, type CapturedMail, type SmtpSink } from './lib/smtp-sink';
import { computePercentile, sleep } from './lib/stats';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { createBodyFactory } from './lib/webhook-bodies';

/** The delivery core's targets: the whole relay at this share of the SMTP floor at least. */
const FLOOR_RATIO_TARGET = 0.4;
/** Durability and rich mail at no more than twice the CPU per mail of a script that sends inside the request. */
const CPU_PER_MAIL_RATIO_TARGET = 2;

/**
 * `count` signed webhooks (8 connections, as fast as acknowledged; `newConnection`: each on a socket of its
 * own, as NetBox sends) into a running relay; mails/s from the first POST to the `count`th mail the sink
 * accepted. Every webhook must be acknowledged.
 */
export async function measureRelayMails(
  relay: Pick<RelayProcess, 'webhookUrl'>,
  sink: SmtpSink,
  count: number,
  firstId: number,
  newConnection = false,
): Promise<{ rate: number; ingestMs: number; totalMs: number }> {
  const before = (await sink.stats()).count;
  const load = await runLoad({ url: relay.webhookUrl, connections: 8, amount: count, secret: BENCH_SECRET, firstId, newConnection });
  if (load.ok !== count) throw new Error(`the relay acknowledged ${load.ok} of ${count} webhooks: ${JSON.stringify(load.statusCodes)}`);
  const done = await sink.waitForCount(before + count, 600_000);
  const totalMs = done.lastAt - load.startedAt;
  return { rate: count / (totalMs / 1000), ingestMs: load.durationSeconds * 1000, totalMs };
}

/** Webhooks one at a time at `ratePerSecond`; POST sent → mail accepted, per webhook (ms). */
async function measureLatencies(relay: RelayProcess, sink: SmtpSink, count: number, ratePerSecond: number): Promise<number[]> {
  const before = (await sink.stats()).count;
  const bodies = createBodyFactory({ firstId: 500_000 });
  const sentAt = new Map<number, number>();
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, start + (i * 1000) / ratePerSecond - Date.now()));
    const { id, body } = bodies.next();
    sentAt.set(id, Date.now());
    const status = await postSigned(relay.webhookUrl, body);
    if (status !== 202) throw new Error(`webhook answered ${status}`);
  }
  await sink.waitForCount(before + count, 60_000);
  return (await sink.arrivals()).filter(([id]) => sentAt.has(id)).map(([id, at]) => at - sentAt.get(id)!);
}

/** `measureRelayMails`, with the CPU time the receiving process used meanwhile (all threads), per mail. */
async function measureMailsAndCpu(receiver: { webhookUrl: string; pid: number }, sink: SmtpSink, count: number, firstId: number) {
  const cpuBefore = readCpuMs(receiver.pid);
  const throughput = await measureRelayMails(receiver, sink, count, firstId);
  return { ...throughput, cpuPerMailMs: (readCpuMs(receiver.pid) - cpuBefore) / count };
}

/** The relay (`serve`): its first mail captured (and the relay warmed), then throughput, then latency at low load. */
async function measureRelay(ctx: BenchContext, sink: SmtpSink, env: Record<string, string>, counts: { mails: number; latency: number }) {
  const relay = await startRelayProcess({ dataDir: path.join(ctx.tmpDir, 'relay'), env });
  try {
    const mail = await captureRelayMail(relay.webhookUrl, sink, 1);
    const throughput = await measureMailsAndCpu(relay, sink, counts.mails, 10);
    ctx.log(
      `relay: ${counts.mails} mails in ${throughput.totalMs} ms (${throughput.rate.toFixed(0)}/s), ${throughput.cpuPerMailMs.toFixed(2)} ms CPU per mail; ingest alone took ${throughput.ingestMs.toFixed(0)} ms`,
    );
    const latencies = await measureLatencies(relay, sink, counts.latency, 10);
    return { mail, rate: throughput.rate, cpuPerMailMs: throughput.cpuPerMailMs, latencies };
  } finally {
    await relay.stop();
  }
}

/** The relay again without the trend chart (its one route says `chart: false`): what the chart costs per mail. */
async function measureRelayWithoutChart(ctx: BenchContext, sink: SmtpSink, env: Record<string, string>, count: number) {
  const routesFile = path.join(ctx.tmpDir, 'routes-no-chart.yaml');
  fs.writeFileSync(routesFile, `routes:\n  - name: no-chart\n    to: ${env.MAIL_TO}\n    chart: false\n`);
  const relay = await startRelayProcess({ dataDir: path.join(ctx.tmpDir, 'relay-no-chart'), env: { ...env, ROUTES_FILE: routesFile } });
  try {
    await captureRelayMail(relay.webhookUrl, sink, 1_000_000);
    const run = await measureMailsAndCpu(relay, sink, count, 1_000_010);
    ctx.log(`relay without the chart: ${run.rate.toFixed(0)} mails/s, ${run.cpuPerMailMs.toFixed(2)} ms CPU per mail`);
    return run;
  } finally {
    await relay.stop();
  }
}

/**
 * The hand-written alternative (bench/servers/send-in-request): signature, a template, nodemailer
 * inside the request; warmed with a few webhooks first, then the same load as the relay.
 */
async function measureSendInRequest(ctx: BenchContext, sink: SmtpSink, env: Record<string, string>, count: number) {
  const script = await startBenchServer('servers/send-in-request.js', env);
  const receiver = { webhookUrl: script.url, pid: script.pid };
  try {
    await measureRelayMails(receiver, sink, Math.min(count, 50), 2_000_000);
    const run = await measureMailsAndCpu(receiver, sink, count, 2_000_100);
    ctx.log(`send-in-request script: ${run.rate.toFixed(0)} mails/s, ${run.cpuPerMailMs.toFixed(2)} ms CPU per mail`);
    return run;
  } finally {
    await script.stop();
  }
}

/** The same run once more under `node --cpu-prof`: where the relay's time goes end to end. */
async function profileRelay(
  ctx: BenchContext,
  sink: SmtpSink,
  env: Record<string, string>,
  count: number,
): Promise<{ rate: number; summary: string }> {
  const dir = path.join(ctx.tmpDir, 'profile');
  fs.mkdirSync(dir, { recursive: true });
  const relay = await startRelayProcess({ dataDir: path.join(dir, 'data'), env, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  let rate: number;
  try {
    rate = (await measureRelayMails(relay, sink, count, 3_000_000)).rate;
  } finally {
    await relay.stop();
  }
  const profile = readCpuProfileDir(dir);
  // Kept after the run (the temp dir is removed) for a closer look in Chrome DevTools or speedscope.
  const kept = path.join(os.tmpdir(), 'compliance-relay-end-to-end.cpuprofile');
  fs.writeFileSync(kept, JSON.stringify(profile));
  ctx.log(`CPU profile kept at ${kept}`);
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  const frames = summarizeTopFrames(profile, 5)
    .map(([name, v]) => `${name} ${pct(v)}`)
    .join('; ');
  const packages = summarizeSelfTime(profile, 6)
    .map(([name, v]) => `${name} ${pct(v)}`)
    .join(', ');
  const inclusive = ['nodemailer', 'better-sqlite3', 'express', 'handlebars']
    .map((pkg) => `${pkg} ${pct(computeInclusiveShare(profile, (url) => url.includes(`/node_modules/${pkg}/`)))}`)
    .join(', ');
  const summary = `top five frames (self time): ${frames}. By package (self): ${packages}. Inclusive: ${inclusive} (start-up and shutdown included)`;
  ctx.log(`profile at ${rate.toFixed(0)} mails/s: ${summary}`);
  return { rate, summary };
}

/** nodemailer alone at the relay's settings: the floor, and stock nodemailer for context. */
async function measureFloors(ctx: BenchContext, sink: SmtpSink, env: Record<string, string>, mail: CapturedMail, count: number) {
  const push = { sink, env: { ...env, DATA_DIR: ctx.tmpDir }, mail, log: ctx.log };
  const floor = await measureSmtpFloor({ ...push, count, label: 'SMTP floor (nodemailer alone)' });
  // Context, not the target: nodemailer with its defaults, as a hand-written script would send (slow: fewer mails).
  const stock = await measureSmtpFloor({ ...push, count: Math.min(count, 500), stock: true, label: 'stock nodemailer (defaults)' });
  return { floor, stock };
}

/**
 * End to end: webhooks in → mails accepted by a real smtp-server (its own process), through the
 * real relay (`node dist/src/main.js serve`, SQLite synchronous=FULL, pool of 5), next to the SMTP
 * floor: nodemailer alone, through the relay's own transport factory, pushing the relay's own mail
 * (captured from a first delivery, sent as those bytes) to the same server. Then the latency from
 * POST to SMTP-accepted at low load, and a CPU profile of one more relay run.
 */
export const endToEndBenchmark: Benchmark = {
  id: 'end-to-end',
  title: 'End to end: webhook in → SMTP accepted, vs the SMTP floor (nodemailer alone)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const counts = ctx.quick ? { mails: 10, latency: 5 } : { mails: 2000, latency: 100 };
    const sink = await startSmtpSink();
    const env = buildRelayEnv({ SMTP_URL: sink.url });
    try {
      const relay = await measureRelay(ctx, sink, env, counts);
      const noChart = await measureRelayWithoutChart(ctx, sink, env, counts.mails);
      const script = await measureSendInRequest(ctx, sink, env, counts.mails);
      const { floor, stock } = await measureFloors(ctx, sink, env, relay.mail, counts.mails);
      const profile = ctx.quick ? undefined : await profileRelay(ctx, sink, env, counts.mails);
      const setting = `${counts.mails} signed webhooks (8 connections) into \`serve\`, timed from the first POST to the ${counts.mails}th mail accepted by smtp-server in another process`;
      return [
        {
          name: 'mails accepted/s, webhook in → SMTP accepted (whole relay)',
          value: relay.rate,
          unit: 'mails/s',
          baseline: {
            name: "SMTP floor: nodemailer alone, relay transport (pool 5, TCP_NODELAY), the relay's mail pre-rendered",
            value: floor,
          },
          target: { kind: 'ratio-at-least', ratio: FLOOR_RATIO_TARGET },
          note: `${setting}; the floor sends the relay's own mail (${relay.mail.raw.length} bytes, captured from a first delivery) as raw bytes, the same number of times, all handed to the pool at once; aim 0.8×`,
        },
        {
          name: 'mails accepted/s vs stock nodemailer (informational)',
          value: relay.rate,
          unit: 'mails/s',
          baseline: { name: 'nodemailer defaults (Nagle on), same mail, pool 5', value: stock },
          note: 'what a hand-written nodemailer script sends at: its pooled connections wait up to 40 ms per mail for a delayed ACK (the relay sets TCP_NODELAY, and so does the floor)',
        },
        {
          name: 'relay CPU per mail, webhook in → SMTP accepted (all threads)',
          value: relay.cpuPerMailMs,
          unit: 'ms',
          baseline: {
            name: 'a script that sends inside the request (Express, signature, Handlebars, nodemailer; nothing stored)',
            value: script.cpuPerMailMs,
          },
          target: { kind: 'ratio-at-most', ratio: CPU_PER_MAIL_RATIO_TARGET },
          note: `utime + stime of each process from /proc over the same ${counts.mails} webhooks (10 ms ticks); the relay stores every delivery (fsync), keeps the sent copy, records the trend and draws the chart; the script does none of that, and sent at ${script.rate.toFixed(0)} mails/s`,
        },
        {
          name: 'relay CPU per mail without the trend chart (informational)',
          value: noChart.cpuPerMailMs,
          unit: 'ms',
          baseline: { name: 'the same script', value: script.cpuPerMailMs },
          note: `one route with chart: false, otherwise the same relay and load: ${noChart.rate.toFixed(0)} mails/s`,
        },
        {
          name: 'webhook → SMTP accepted latency p50',
          value: computePercentile(relay.latencies, 50),
          unit: 'ms',
          target: { kind: 'at-most', value: 50 },
          note: `${relay.latencies.length} webhooks at 10/s, POST sent → smtp-server accepted (Date.now() in both processes)`,
        },
        { name: 'webhook → SMTP accepted latency p99', value: computePercentile(relay.latencies, 99), unit: 'ms' },
        ...(profile
          ? [
              {
                name: 'mails accepted/s under --cpu-prof (profile run)',
                value: profile.rate,
                unit: 'mails/s',
                note: `V8 CPU profile of \`serve\` (event loop) over the same ${counts.mails} webhooks: ${profile.summary}`,
              },
            ]
          : []),
      ];
    } finally {
      await sink.stop();
    }
  },
};

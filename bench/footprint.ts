import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { distPath, findFreePort, readMemoryMb, startRelayProcess, stopChild } from './lib/processes';
import { buildRelayEnv } from './lib/relay-env';
import { startSmtpSink } from './lib/smtp-sink';
import { computePercentile, sleep } from './lib/stats';
import type { Benchmark, BenchContext, Figure } from './lib/types';

/** `serve` at rest with zero configuration, at most this resident (issue 42; 80 MB in issue 16). */
const REST_RSS_TARGET_MB = 70;
/** `serve` at rest with SMTP, NetBox and the dashboard configured, at most this resident (issue 42). */
const CONFIGURED_RSS_TARGET_MB = 80;
/** Issue 16: `--help` and `check-config` answer within this (wall time, process start to exit). */
const CLI_TARGET_MS = 150;
/** How long `serve` sits idle after /healthz answers before its RSS is read. */
const SETTLE_MS = 5_000;
/**
 * The first start is also read this long after /healthz: V8's memory reducer (which compacts the old
 * generation of an idle isolate) runs about 8 s after start-up's last collection (`--trace-gc`: a
 * "Mark-Compact (reduce)" 8.7 s in, RSS 82 → 78 MB), so RSS at 5 s is not yet what an idle relay holds.
 */
const LONG_SETTLE_MS = 45_000;

/**
 * `serve` idle, with zero configuration or with `env`: its VmRSS `SETTLE_MS` after it answered
 * /healthz, and when `longMs` is given, again that long after.
 */
async function measureServeAtRest(
  ctx: BenchContext,
  run: string,
  options: { env?: Record<string, string>; longMs?: number } = {},
): Promise<{ rssMb: number; longRssMb?: number }> {
  const { env, longMs } = options;
  const relay = await startRelayProcess({ dataDir: path.join(ctx.tmpDir, `rest-${run}`), env: env ?? {}, zeroConfig: env === undefined });
  try {
    await sleep(SETTLE_MS);
    const rssMb = readMemoryMb(relay.pid).rssMb;
    if (longMs === undefined) return { rssMb };
    await sleep(longMs - SETTLE_MS);
    return { rssMb, longRssMb: readMemoryMb(relay.pid).rssMb };
  } finally {
    await relay.stop();
  }
}

/**
 * `serve` at rest as a production relay is configured: mails to a real SMTP server (in its own process;
 * the relay checks it at start), a NetBox URL and token (not called at rest: no report arrives), and
 * ADMIN_TOKEN (the dashboard and admin API on, nobody browsing). Its VmRSS `SETTLE_MS` after /healthz.
 */
async function measureConfiguredAtRest(ctx: BenchContext, runs: number): Promise<number[]> {
  const sink = await startSmtpSink();
  try {
    const env = buildRelayEnv({
      SMTP_URL: sink.url,
      NETBOX_URL: `http://127.0.0.1:${await findFreePort()}`,
      NETBOX_TOKEN: 'bench-netbox-token-0123456789',
      ADMIN_TOKEN: 'bench-admin-token-0123456789',
    });
    const rss: number[] = [];
    for (let i = 0; i < runs; i++) rss.push((await measureServeAtRest(ctx, `configured-${i}`, { env })).rssMb);
    return rss;
  } finally {
    await sink.stop();
  }
}

/** An idle `node` doing nothing (a timer keeps it alive): what any Node process costs. */
async function measureIdleNode(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await sleep(SETTLE_MS);
    return readMemoryMb(child.pid!).rssMb;
  } finally {
    await stopChild(child);
  }
}

/** Wall time (ms) of one process from spawn to exit; it must exit 0. */
function timeCommand(args: string[], cwd: string): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

/** `--help`, `check-config` (zero config) and `node -e 0`, alternating `runs` times; the median of each. */
function measureCli(ctx: BenchContext, runs: number): { help: number; checkConfig: number; node: number } {
  const cwd = path.join(ctx.tmpDir, 'cli');
  fs.mkdirSync(cwd, { recursive: true });
  const main = distPath('src', 'main.js');
  const times = { help: [] as number[], checkConfig: [] as number[], node: [] as number[] };
  // One of each first, not counted: the first read of the files from disk.
  timeCommand([main, '--help'], cwd);
  timeCommand([main, 'check-config'], cwd);
  for (let i = 0; i < runs; i++) {
    times.node.push(timeCommand(['-e', '0'], cwd));
    times.help.push(timeCommand([main, '--help'], cwd));
    times.checkConfig.push(timeCommand([main, 'check-config'], cwd));
  }
  ctx.log(
    `medians of ${runs}: node -e 0 ${computePercentile(times.node, 50).toFixed(0)} ms, --help ${computePercentile(times.help, 50).toFixed(0)} ms, check-config ${computePercentile(times.checkConfig, 50).toFixed(0)} ms`,
  );
  return {
    help: computePercentile(times.help, 50),
    checkConfig: computePercentile(times.checkConfig, 50),
    node: computePercentile(times.node, 50),
  };
}

/**
 * Footprint: what the relay costs before any webhook. `serve` at rest with zero configuration (no
 * variable but PORT: SQLite under ./data, mails to .eml files, unsigned on loopback), RSS next to an
 * idle `node`; and the wall time of `compliance-relay --help` and `check-config` next to `node -e 0`,
 * alternating, medians.
 */
export const footprintBenchmark: Benchmark = {
  id: 'footprint',
  title: 'Footprint: serve at rest (zero config) and command-line start-up',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const restRuns = ctx.quick ? 1 : 3;
    const longMs = ctx.quick ? SETTLE_MS : LONG_SETTLE_MS;
    const first = await measureServeAtRest(ctx, '0', { longMs });
    const rss: number[] = [first.rssMb];
    for (let i = 1; i < restRuns; i++) rss.push((await measureServeAtRest(ctx, String(i))).rssMb);
    const configured = await measureConfiguredAtRest(ctx, restRuns);
    const idleNode = await measureIdleNode();
    ctx.log(
      `serve at rest: ${rss.map((v) => v.toFixed(0)).join(', ')} MB; the first after ${longMs / 1000} s: ${first.longRssMb!.toFixed(0)} MB; configured (SMTP, NetBox, dashboard) ${configured.map((v) => v.toFixed(0)).join(', ')} MB; idle node ${idleNode.toFixed(0)} MB`,
    );
    const cli = measureCli(ctx, ctx.quick ? 2 : 15);
    const cliNote = (what: string) =>
      `${what}, zero config, cwd a temp dir; median of ${ctx.quick ? 2 : 15} runs alternating with \`node -e 0\`, spawn to exit`;
    return [
      {
        name: 'RSS of `serve` at rest, zero config',
        value: computePercentile(rss, 50),
        unit: 'MB',
        baseline: { name: 'idle node (a timer, nothing loaded)', value: idleNode },
        target: { kind: 'at-most', value: REST_RSS_TARGET_MB },
        note: `VmRSS ${SETTLE_MS / 1000} s after /healthz first answered, median of ${restRuns} starts (${rss.map((v) => v.toFixed(0)).join(', ')} MB)`,
      },
      {
        name: 'RSS of `serve` at rest, SMTP + NetBox + dashboard configured',
        value: computePercentile(configured, 50),
        unit: 'MB',
        baseline: { name: 'idle node (a timer, nothing loaded)', value: idleNode },
        target: { kind: 'at-most', value: CONFIGURED_RSS_TARGET_MB },
        note: `VmRSS ${SETTLE_MS / 1000} s after /healthz first answered, median of ${restRuns} starts (${configured.map((v) => v.toFixed(0)).join(', ')} MB); SMTP_URL at smtp-server in its own process, NETBOX_URL and NETBOX_TOKEN (not called at rest), ADMIN_TOKEN (dashboard not browsed)`,
      },
      {
        name: `RSS of \`serve\` idle ${longMs / 1000} s, zero config`,
        value: first.longRssMb!,
        unit: 'MB',
        baseline: { name: 'idle node (a timer, nothing loaded)', value: idleNode },
        note: `VmRSS of the first start above, ${longMs / 1000} s after /healthz first answered (informational: V8's memory reducer has had its turn)`,
      },
      {
        name: '`compliance-relay --help` wall time',
        value: cli.help,
        unit: 'ms',
        baseline: { name: 'node -e 0', value: cli.node },
        target: { kind: 'at-most', value: CLI_TARGET_MS },
        note: cliNote('`node dist/src/main.js --help`'),
      },
      {
        name: '`compliance-relay check-config` wall time',
        value: cli.checkConfig,
        unit: 'ms',
        baseline: { name: 'node -e 0', value: cli.node },
        target: { kind: 'at-most', value: CLI_TARGET_MS },
        note: cliNote('`node dist/src/main.js check-config` (templates compiled and checked)'),
      },
    ];
  },
};

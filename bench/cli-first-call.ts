import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from '../src/shared';
import { computePercentile } from './lib/stats';
import type { BenchContext, Benchmark, Figure } from './lib/types';

/** The README's promise: its first command answers within this, the first time it is run. */
const FIRST_CALL_TARGET_MS = 300;

/**
 * The README's first command exactly as written there (`node dist/src/main.js check-config`, from the
 * clone's root, nothing installed beyond `npm ci`), timed spawn to exit.
 */
const README_FIRST_COMMAND = ['dist/src/main.js', 'check-config'];

/** Wall time (ms) of one `node …` from spawn to exit, in the clone's root; it must exit 0. */
function timeNode(args: string[], dotenv: string): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, {
    cwd: findPackageRoot(),
    // Only PATH and a .env that does not exist: a developer's own .env must not change what is timed.
    env: { PATH: process.env.PATH ?? '', DOTENV_CONFIG_PATH: dotenv },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

/**
 * The README's first command line, the first time (nothing run before it in this benchmark, no npx
 * cache involved) and then the median of several runs, each next to `node -e 0` measured in the same
 * run (first call, then alternating).
 */
export const cliFirstCallBenchmark: Benchmark = {
  id: 'cli-first-call',
  title: "The README's first command line (check-config), first call and median",
  async run(ctx: BenchContext): Promise<Figure[]> {
    // An empty .env: the command reads one, as it does from a clone, but no developer's settings.
    const dotenv = path.join(ctx.tmpDir, 'empty.env');
    fs.writeFileSync(dotenv, '');
    const runs = ctx.quick ? 2 : 15;
    const firstNode = timeNode(['-e', '0'], dotenv);
    const first = timeNode(README_FIRST_COMMAND, dotenv);
    const times = { node: [] as number[], command: [] as number[] };
    for (let i = 0; i < runs; i++) {
      times.node.push(timeNode(['-e', '0'], dotenv));
      times.command.push(timeNode(README_FIRST_COMMAND, dotenv));
    }
    const median = { node: computePercentile(times.node, 50), command: computePercentile(times.command, 50) };
    ctx.log(
      `first call ${first.toFixed(0)} ms (node -e 0 ${firstNode.toFixed(0)} ms); medians of ${runs}: ${median.command.toFixed(0)} ms (node -e 0 ${median.node.toFixed(0)} ms)`,
    );
    const command = `\`node ${README_FIRST_COMMAND.join(' ')}\``;
    return [
      {
        name: `${command} first call`,
        value: first,
        unit: 'ms',
        baseline: { name: 'node -e 0 (first call)', value: firstNode },
        target: { kind: 'at-most', value: FIRST_CALL_TARGET_MS },
        note: 'zero config, cwd the clone root, spawn to exit; the first run of this benchmark',
      },
      {
        name: `${command} median`,
        value: median.command,
        unit: 'ms',
        baseline: { name: 'node -e 0', value: median.node },
        target: { kind: 'at-most', value: FIRST_CALL_TARGET_MS },
        note: `median of ${runs}, alternating with \`node -e 0\``,
      },
    ];
  },
};

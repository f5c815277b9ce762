#!/usr/bin/env node
/**
 * The composition root: the only module that reads process.env and .env, touches the real file
 * system for configuration, and wires process signals. Everything else takes these as arguments.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import dotenv from 'dotenv';
import { runCli } from './cli';

function readEnv(): Record<string, string | undefined> {
  const file = path.resolve(process.env.DOTENV_CONFIG_PATH ?? '.env');
  // Variables already in the environment win over the file, as with dotenv's defaults.
  const fromFile = fs.existsSync(file) ? dotenv.parse(fs.readFileSync(file)) : {};
  return { ...fromFile, ...process.env };
}

/** V8's own default (`node --v8-options`): a scavenge may double the young generation, up to its maximum. */
const SEMI_SPACE_GROWTH_FACTOR_DEFAULT = 2;

/**
 * Issue 16: how far past what the last full collection left alive V8 lets the old generation grow
 * before the next one: 2×. V8 otherwise picks 1.1× to 4× by how fast it collects, and under a burst
 * it picked the top, so garbage that outlived a few awaits piled up in the old generation: the
 * 20,000-webhook burst peaked at 254–257 MB, and 205–210 MB at 2×, with the same drain time and CPU
 * per mail; at 1.5× it peaked at 193–199 MB but acks waited longer while the worker mailed (ack p99
 * 43–44 ms against 29–33 ms). Measured in BENCHMARKS.md.
 */
const OLD_GENERATION_GROWTH_PERCENT = 100;

/**
 * Whether the user set a V8 flag matching `pattern` on the `node` command line or in NODE_OPTIONS:
 * then `serve` leaves that part of the heap as they set it.
 */
function isSetByUser(pattern: RegExp): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => pattern.test(arg));
}

/*
 * Issue 16: loading `serve`'s modules and checking its templates allocates enough for V8 to grow its
 * young generation to the maximum (two 16 MB semi-spaces), and V8 never shrinks it while the relay
 * idles, so `serve` sat at rest with ~30 MB it used only while starting. A growth factor of 1 while it
 * starts keeps the young generation at its initial size (~1 MB a semi-space); once it listens the factor
 * is V8's default again, so under load it grows exactly as before (same CPU per mail: BENCHMARKS.md).
 * The factor is read by V8 at each growth, so setting it at run time works (unlike the maximum size).
 */
const tuneYoungGeneration = !isSetByUser(/semi[-_]space/);
// Node refuses this one in NODE_OPTIONS: only the command line can carry it.
const tuneOldGeneration = !isSetByUser(/heap[-_]growing[-_]percent/);

runCli(process.argv, {
  markStarting: () => {
    if (tuneYoungGeneration) v8.setFlagsFromString('--semi-space-growth-factor=1');
    // Read by V8 each time it sets the next limit, so it holds from here on (start-up included).
    if (tuneOldGeneration) v8.setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
  },
  markStarted: () => {
    if (tuneYoungGeneration) v8.setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_FACTOR_DEFAULT}`);
  },
  env: readEnv(),
  stdout: process.stdout,
  stderr: process.stderr,
  readFile: (file) => fs.readFileSync(file),
  cwd: process.cwd(),
  stdoutIsTty: process.stdout.isTTY === true,
  onSignal: (handler) => {
    process.once('SIGTERM', () => handler('SIGTERM'));
    process.once('SIGINT', () => handler('SIGINT'));
  },
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`compliance-relay: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

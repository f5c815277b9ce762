import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';
import { sleep } from './stats';

/** The built package (benchmarks always run compiled code: `npm run bench` builds first). */
export function distPath(...parts: string[]): string {
  return path.join(findPackageRoot(), 'dist', ...parts);
}

/** A loopback port nobody listens on right now (for a peer that starts later, or never). */
export async function findFreePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves with the first IPC message of `type` from the child (rejects if it exits first). */
export function waitForMessage<T = Record<string, unknown>>(child: ChildProcess, type: string, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`child exited (${code}) before sending "${type}"`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no "${type}" from the child within ${timeoutMs} ms`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Sends `request` and waits for the reply of type `reply`. */
export async function askChild<T>(child: ChildProcess, request: Record<string, unknown>, reply: string, timeoutMs = 60_000): Promise<T> {
  const answer = waitForMessage<T>(child, reply, timeoutMs);
  child.send(request);
  return answer;
}

/** Forks a compiled script under dist/bench with an IPC channel. */
export function forkBenchScript(relative: string, options: { env?: Record<string, string>; execArgv?: string[] } = {}): ChildProcess {
  return fork(distPath('bench', relative), [], {
    env: { ...process.env, ...options.env },
    execArgv: options.execArgv ?? [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

/** Starts one of the bench/servers HTTP scripts on a free port; resolves with its webhook URL once it is ready. */
export async function startBenchServer(
  script: string,
  env: Record<string, string>,
  execArgv: string[] = [],
): Promise<{ url: string; pid: number; stop: () => Promise<number | null> }> {
  const port = await findFreePort();
  const child = forkBenchScript(script, { env: { ...env, PORT: String(port) }, execArgv });
  await waitForMessage(child, 'ready');
  return { url: `http://127.0.0.1:${port}/webhook`, pid: child.pid!, stop: () => stopChild(child) };
}

/** Ends a child we started: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/**
 * CPU time a process has used so far, all its threads, user + system, in ms, from /proc/<pid>/stat
 * (utime and stime, fields 14 and 15, in USER_HZ ticks: 100 per second on Linux, so 10 ms steps).
 */
export function readCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The machine's CPU time so far, all cores, from the first line of /proc/stat (USER_HZ ticks): `busy`
 * (everything but idle and iowait) and `total`. Two readings give how busy the machine was between them.
 */
export function readMachineCpuTicks(): { busy: number; total: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, v) => sum + v, 0);
  return { busy: total - fields[3] - fields[4], total };
}

/** Resident memory of a process in MiB from /proc: `VmRSS` now, `VmHWM` the peak so far. */
export function readMemoryMb(pid: number): { rssMb: number; peakRssMb: number; anonMb: number; fileMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  // RssFile: pages of mapped files (node's own binary, the native modules), shared with the page cache.
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024, anonMb: kb('RssAnon') / 1024, fileMb: kb('RssFile') / 1024 };
}

/**
 * The flags `npm start` gives `node` before `dist/src/main.js` (package.json's `start` script: the one list,
 * which the Dockerfile's CMD repeats and a test holds equal), so that every figure is for the relay as users run it.
 */
export function readStartNodeFlags(root = findPackageRoot()): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  const main = words.indexOf('dist/src/main.js');
  if (words[0] !== 'node' || main < 0)
    throw new Error(`package.json's start is not "node [flags] dist/src/main.js ...": ${pkg.scripts.start}`);
  return words.slice(1, main);
}

export interface RelayProcess {
  pid: number;
  url: string;
  webhookUrl: string;
  child: ChildProcess;
  /** Everything the relay wrote to stderr/stdout (LOG_LEVEL=warn keeps it short). */
  output(): string;
  stop(): Promise<number | null>;
}

/**
 * The real thing: `node [npm start's flags] dist/src/main.js serve` as a child process with its own environment
 * (DATA_DIR in a temp dir, cwd there too so no developer .env is read). Resolves once /healthz answers.
 * `zeroConfig`: no variable but PORT, as a first-time user starts it. `execArgv` comes after the start flags.
 * `root`: another built checkout of the relay (its dist and its start flags), for A/B runs; this one by default.
 */
export async function startRelayProcess(options: {
  dataDir: string;
  root?: string;
  env: Record<string, string>;
  execArgv?: string[];
  zeroConfig?: boolean;
}): Promise<RelayProcess> {
  fs.mkdirSync(options.dataDir, { recursive: true });
  const port = await findFreePort();
  const webhookPath = options.env.WEBHOOK_PATH ?? '/webhook';
  // Zero config: nothing but a free port (the default DATA_DIR, ./data, is under the temp cwd).
  const defaults = options.zeroConfig ? {} : { HOST: '127.0.0.1', DATA_DIR: options.dataDir, LOG_LEVEL: 'warn' };
  const root = options.root ?? findPackageRoot();
  const main = path.join(root, 'dist', 'src', 'main.js');
  const child = spawn(process.execPath, [...readStartNodeFlags(root), ...(options.execArgv ?? []), main, 'serve'], {
    cwd: options.dataDir,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...defaults, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let spawnError: Error | undefined;
  child.on('error', (error) => (spawnError = error));
  const keep = (chunk: Buffer) => {
    // Bounded: a chatty relay must not grow the bench's own memory.
    if (output.length < 1_000_000) output += chunk.toString('utf8');
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (spawnError) throw spawnError;
    if (child.exitCode !== null) throw new Error(`the relay exited with ${child.exitCode} at start:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the relay did not answer /healthz within 30 s:\n${output}`);
    }
    await sleep(50);
  }
  return { pid: child.pid!, url, webhookUrl: `${url}${webhookPath}`, child, output: () => output, stop: () => stopChild(child) };
}

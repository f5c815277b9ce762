import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';
import { waitUntil } from './relay-harness';

/** The built entry point: child-process tests run what users run (`npm test` builds it first). */
const MAIN_JS = path.join(findPackageRoot(), 'dist/src/main.js');

export interface RelayProcess {
  child: ChildProcess;
  url: string;
  webhookUrl: string;
  /** Everything the process wrote (JSON log lines). */
  output(): string;
  /** SIGKILL: the process dies mid-whatever, as on an OOM kill or a lost node. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit (graceful shutdown). */
  stop(): Promise<void>;
}

/**
 * `node dist/src/main.js serve` as a child process on 127.0.0.1, port 0; resolves once it listens.
 * Needs LOG_LEVEL info or lower (the port comes from the "listening" line). Only PATH is inherited: the environment given is the whole configuration (no .env is read).
 */
export async function startRelayProcess(env: Record<string, string>, dataDir: string): Promise<RelayProcess> {
  const child = spawn(process.execPath, [MAIN_JS, 'serve'], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      // An empty .env: no developer's settings leak in.
      DOTENV_CONFIG_PATH: os.devNull,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}:\n${out}`);
      const m = /"port":(\d+)[^\n]*listening on/.exec(out) ?? /listening on [^:\s]+:(\d+)/.exec(out);
      return m ? Number(m[1]) : undefined;
    },
    20_000,
    'the relay to listen',
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    url,
    webhookUrl: `${url}/webhook`,
    output: () => out,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

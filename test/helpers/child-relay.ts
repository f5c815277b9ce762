import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface ChildRelay {
  proc: ChildProcess;
  port: number;
  url: string;
  /** Every stdout/stderr line so far (JSON log lines and anything else). */
  output: string[];
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export const MAIN_JS = path.resolve(__dirname, '../../dist/src/main.js');

/**
 * `node dist/src/main.js serve` (or `args`) as a real child process (built by `npm test`), listening on a free
 * port on 127.0.0.1. The port is read from the JSON "listening on" log line. The child's cwd is
 * `cwd` (a temp dir) so no developer `.env` leaks in.
 */
export async function startChildRelay(
  env: Record<string, string>,
  options: { cwd: string; timeoutMs?: number; args?: string[] },
): Promise<ChildRelay> {
  const proc = spawn(process.execPath, [MAIN_JS, ...(options.args ?? ['serve'])], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a relay behind that the caller has no handle on.
      proc.kill('SIGKILL');
      reject(new Error(`the relay did not start:\n${output.join('\n')}`));
    }, options.timeoutMs ?? 60_000);
    const onLine = (line: string) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg?.startsWith('listening on') && typeof entry.port === 'number') {
          clearTimeout(timer);
          resolve(entry.port);
        }
      } catch {
        // Not a JSON log line (a stack, a warning): kept in `output`.
      }
    };
    readline.createInterface({ input: proc.stdout }).on('line', onLine);
    readline.createInterface({ input: proc.stderr }).on('line', onLine);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the relay exited (${code ?? signal}) before listening:\n${output.join('\n')}`));
    });
  });
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    output,
    exited,
    async kill(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

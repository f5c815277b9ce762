import { PassThrough } from 'node:stream';
import fs from 'node:fs';
import { runCli } from '../../src/cli';
import type { TransportDescriptor } from '../../src/notify';

/** Runs one `compliance-relay` command line in-process with this environment; captures its output. */
export async function runCliCaptured(
  args: string[],
  env: Record<string, string | undefined>,
  options: { transports?: readonly TransportDescriptor[] } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runCli(['node', 'compliance-relay', ...args], {
    env,
    stdout,
    stderr,
    readFile: (f) => fs.readFileSync(f),
    cwd: process.cwd(),
    onSignal: () => undefined,
    transports: options.transports,
  });
  return { code, stdout: out, stderr: err };
}

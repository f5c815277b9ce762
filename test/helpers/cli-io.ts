import fs from 'node:fs';
import { Writable } from 'node:stream';
import type { CliIo } from '../../src/cli';

export interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
}

/** A CliIo over the real file system with captured stdout/stderr, for running commands in-process. */
export function captureIo(env: Record<string, string | undefined>, cwd: string): CapturedIo {
  let out = '';
  let err = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        append(chunk.toString('utf8'));
        done();
      },
    });
  return {
    env,
    cwd,
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    readFile: (file) => fs.readFileSync(file),
    onSignal: () => {},
    out: () => out,
    err: () => err,
  };
}

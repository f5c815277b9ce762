import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Config } from '../config';
import type { Clock } from '../shared';
import type { TransportDescriptor } from '../notify';

/** What a command may touch, handed down from main.ts. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: Writable;
  stderr: Writable;
  readFile: (file: string) => Buffer;
  cwd: string;
  /** Whether stdout is a terminal: pretty logs there, JSON otherwise. */
  stdoutIsTty?: boolean;
  /** Registers a handler for SIGTERM/SIGINT (main.ts wires it to process signals). */
  onSignal: (handler: (signal: string) => void) => void;
  /** The time commands read (`preview --digest`'s periods); absent: the system clock. */
  clock?: Clock;
  /** The transports mails may go through; absent: the relay's own (notify's TRANSPORTS). */
  transports?: readonly TransportDescriptor[];
}

/** sysexits.h EX_CONFIG: the configuration is wrong; restarting will not help. */
export const EXIT_CONFIG = 78;
/** sysexits.h EX_UNAVAILABLE: a service (the mail server, NetBox) could not be reached. */
export const EXIT_UNAVAILABLE = 69;
/** sysexits.h EX_USAGE: the command line is wrong. */
export const EXIT_USAGE = 64;

/** A command line a command cannot follow: `runCli` prints its message and resolves with EXIT_USAGE. */
export class UsageError extends Error {}

/** Runs a command with the configuration (an invalid one exits 78 before it loads); `listens`: HOST's name must resolve. */
export type RunWithConfig = (command: (config: Config) => number | Promise<number>, options?: { listens: boolean }) => Promise<void>;

/** The package's version, for `--version` and the boot line: found without importing shared, whose door loads zod. */
export function readPackageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'compliance-relay') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`compliance-relay package.json not found above ${__dirname}`);
  }
}

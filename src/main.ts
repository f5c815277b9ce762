#!/usr/bin/env node
/** The composition root: the only module that reads process.env and .env and wires process signals. */
import fs from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import { EXIT_CONFIG, runCli } from './cli';

/**
 * The environment over the .env file (variables already set win, as with dotenv's defaults). No ./.env is no .env;
 * but a file DOTENV_CONFIG_PATH names, or a ./.env there is, must be read: else the relay would start without the
 * configuration meant for it, and nothing would say so. Undefined (said on stderr) when it cannot be read.
 */
function readEnv(): Record<string, string | undefined> | undefined {
  const named = process.env.DOTENV_CONFIG_PATH || undefined;
  const file = path.resolve(named ?? '.env');
  try {
    return { ...dotenv.parse(fs.readFileSync(file)), ...process.env };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT' && named === undefined) return { ...process.env };
    const fix = named
      ? 'accepts the path of a readable .env file; unset it to read ./.env when there is one'
      : 'make it readable, or remove it';
    process.stderr.write(
      `compliance-relay: the configuration is invalid (nothing was started):\n  - ${named ? 'DOTENV_CONFIG_PATH' : '.env'}: cannot read ${file} (${code}): ${fix}\n`,
    );
    return undefined;
  }
}

const env = readEnv();
if (env === undefined) process.exit(EXIT_CONFIG);

runCli(process.argv, {
  env,
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

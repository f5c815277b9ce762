#!/usr/bin/env node
/**
 * The composition root: the only module that reads process.env and .env, touches the real file
 * system for configuration, and wires process signals. Everything else takes these as arguments.
 */
import fs from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import { runCli } from './cli';

function readEnv(): Record<string, string | undefined> {
  const file = path.resolve(process.env.DOTENV_CONFIG_PATH ?? '.env');
  // Variables already in the environment win over the file, as with dotenv's defaults.
  const fromFile = fs.existsSync(file) ? dotenv.parse(fs.readFileSync(file)) : {};
  return { ...fromFile, ...process.env };
}

runCli(process.argv, {
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

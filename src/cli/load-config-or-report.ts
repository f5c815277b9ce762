import { ConfigError, loadConfig, type Config } from '../config';
import type { CliIo } from './io';

/** Loads the config, or prints every problem by variable name and returns undefined. */
export function loadConfigOrReport(io: CliIo): Config | undefined {
  try {
    return loadConfig(io.env, { readFile: (file) => io.readFile(file).toString('utf8'), cwd: io.cwd, transports: io.transports });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`compliance-relay: the configuration is invalid (nothing was started):\n`);
    for (const issue of error.issues) io.stderr.write(`  - ${issue.variable}: ${issue.message}\n`);
    return undefined;
  }
}

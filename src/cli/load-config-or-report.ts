import dns from 'node:dns/promises';
import net from 'node:net';
import { setTimeout } from 'node:timers/promises';
import { ConfigError, loadConfig, type Config } from '../config';
import type { ConfigIssue } from '../shared';
import type { CliIo } from './io';

/** How long HOST's name may take to resolve: a resolver that does not answer must not hold the start. */
const HOST_LOOKUP_TIMEOUT_MS = 5_000;

/** Loads the config, or prints every problem (with `found`, unless the schema refused that variable) and returns undefined. */
export function loadConfigOrReport(io: CliIo, found: ConfigIssue[]): Config | undefined {
  let issues = found;
  try {
    const config = loadConfig(io.env, { readFile: (file) => io.readFile(file).toString('utf8'), cwd: io.cwd, transports: io.transports });
    if (found.length === 0) return config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const refused = new Set(error.issues.map((i) => i.variable));
    issues = [...error.issues, ...found.filter((i) => !refused.has(i.variable))];
  }
  io.stderr.write(`compliance-relay: the configuration is invalid (nothing was started):\n`);
  for (const issue of issues) io.stderr.write(`  - ${issue.variable}: ${issue.message}\n`);
  return undefined;
}

/** HOST given as a name must resolve (serve, check-config): a typo is a configuration problem named, not a failed listen. */
export async function checkHostResolves(env: CliIo['env']): Promise<ConfigIssue[]> {
  const host = env.HOST?.trim();
  if (!host || net.isIP(host) !== 0) return [];
  const failure = await Promise.race([
    dns.lookup(host).then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.code ?? 'error',
    ),
    // Unreferenced: a lookup that answers in time lets the process go on (or end) without waiting for it.
    setTimeout(HOST_LOOKUP_TIMEOUT_MS, `no answer within ${HOST_LOOKUP_TIMEOUT_MS / 1000} s`, { ref: false }),
  ]);
  if (failure === undefined) return [];
  const message = `"${host}" does not resolve (${failure}): accepts an IP address of this machine (0.0.0.0 or :: for all, 127.0.0.1) or a host name that resolves to one`;
  return [{ variable: 'HOST', message }];
}

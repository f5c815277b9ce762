import type { Config } from '../config';
import { describeMailError } from '../mail';

/**
 * A failed SMTP check or send as the command line prints it: the code, then what happened and what
 * to do when the failure is one a user can fix (refused, timed out, DNS, TLS, certificate, login),
 * else the server's own words.
 */
export function describeMailFailure(error: unknown, config: Config): string {
  const err = error as { code?: string; responseCode?: number; message?: string };
  const server = config.smtp ? new URL(config.smtp.url).host : undefined;
  const code = `${err.code ?? 'error'}${err.responseCode ? ` ${err.responseCode}` : ''}`;
  return `(${code}): ${describeMailError(err, server) ?? err.message ?? String(error)}`;
}

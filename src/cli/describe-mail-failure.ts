import type { Config } from '../config';
import { describeMailError, readFailureCode } from '../notify';

/**
 * A failed mail transport check or send as the command line prints it: the catalogue's code (as the relay stores
 * it), then what happened and what to do when the failure is one a user can fix (refused, timed out,
 * DNS, TLS, certificate, login), else the server's own words.
 */
export function describeMailFailure(error: unknown, config: Config): string {
  const err = error as { code?: string; responseCode?: number; message?: string };
  const server = config.transport.name === 'smtp' ? new URL(config.transport.settings.url).host : undefined;
  const code = readFailureCode(error);
  const reply = err.responseCode ? ` ${err.responseCode}` : '';
  return `(${code}${reply}): ${describeMailError({ code, message: err.message }, server) ?? err.message ?? String(error)}`;
}

import { SECRET_VARIABLES, type Env } from './schema';
import type { SourceConfig } from './sources-file';

/**
 * Every secret value in force, so that the logger masks it wherever it appears: the settings the schema
 * flags `secret`, and what is derived from them (DATABASE_URL's password, sources' secrets); the transport adds its own.
 */
export function collectSecretValues(e: Env, sources: readonly SourceConfig[]): string[] {
  const declared = SECRET_VARIABLES.map((name) => e[name]).filter((value): value is string => typeof value === 'string');
  return [
    ...declared,
    ...sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
    ...databasePassword(e.DATABASE_URL),
  ];
}

/** DATABASE_URL's password, so it reaches no log line even alone. */
function databasePassword(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [password] : [];
  } catch {
    return [];
  }
}

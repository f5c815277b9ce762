import type { OAuth2Config } from './build-oauth2-config';
import { SECRET_VARIABLES, type Env } from './schema';
import type { SourceConfig } from './sources-file';

/**
 * Every secret value in force, so that the logger masks it wherever it appears: the settings the schema
 * flags `secret`, and what is derived from them or read from files (passwords in URLs, keys, sources' secrets).
 */
export function collectSecretValues(
  e: Env,
  mail: { password?: string; oauth2?: OAuth2Config } | undefined,
  sources: readonly SourceConfig[],
): string[] {
  const declared = SECRET_VARIABLES.map((name) => e[name]).filter((value): value is string => typeof value === 'string');
  return [
    ...declared,
    ...sources.flatMap((s) => [...s.secrets, ...(s.netbox.token ? [s.netbox.token] : [])]),
    ...(mail && 'password' in mail && mail.password ? [mail.password] : []),
    ...oauth2Secrets(mail?.oauth2),
    ...databasePassword(e.DATABASE_URL),
  ];
}

/** The client secret and the private key (and each line of the key, in case a log line holds one). */
function oauth2Secrets(oauth2: OAuth2Config | undefined): string[] {
  if (!oauth2) return [];
  const key = oauth2.privateKeyPem ? [oauth2.privateKeyPem, ...keyLines(oauth2.privateKeyPem)] : [];
  return [...(oauth2.clientSecret ? [oauth2.clientSecret] : []), ...key];
}

function keyLines(pem: string): string[] {
  return pem.split(/\r?\n/).filter((line) => line.length >= 16 && !line.startsWith('-----'));
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

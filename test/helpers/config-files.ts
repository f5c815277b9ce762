import { ConfigError, loadConfig, type Config } from '../../src/config';

/** A readFile over these files only (by absolute path); any other is ENOENT, as the file system says it. */
function readFrom(files: Record<string, string>) {
  return (file: string) => {
    if (!(file in files)) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    return files[file];
  };
}

/** Loads the configuration from this environment in /srv, reading only these files. */
export function loadWithFiles(env: Record<string, string>, files: Record<string, string> = {}): Config {
  return loadConfig(env, { readFile: readFrom(files), cwd: '/srv' });
}

/** Every problem loadConfig finds, as `VARIABLE: message`; empty when the configuration loads. */
export function configMessages(env: Record<string, string>, files: Record<string, string>): string[] {
  try {
    loadWithFiles(env, files);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.variable}: ${i.message}`);
    throw error;
  }
  return [];
}

const EXAMPLE_SECRET = 'a-webhook-secret-of-32-characters';
const EXAMPLE_TOKEN = '0123456789abcdef0123456789abcdef01234567';

/** The environment the docs' and examples/' configuration files are written for: both NetBox sources' tokens and secrets. */
export const EXAMPLES_ENV = {
  NETBOX_URL: 'https://netbox.example.com',
  NETBOX_TOKEN: EXAMPLE_TOKEN,
  WEBHOOK_SECRET: EXAMPLE_SECRET,
  NETBOX_LAB_TOKEN: EXAMPLE_TOKEN,
  LAB_WEBHOOK_SECRET: EXAMPLE_SECRET,
};

/** The secret and CA files examples/sources.yaml names, as mounted. */
export const EXAMPLES_SECRET_FILES = {
  '/run/secrets/netbox_prod_token': EXAMPLE_TOKEN,
  '/run/secrets/prod_webhook_secret': EXAMPLE_SECRET,
  '/etc/relay/lab-ca.pem': '-----BEGIN CERTIFICATE-----\n',
};

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

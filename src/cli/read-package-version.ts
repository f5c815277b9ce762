import fs from 'node:fs';
import path from 'node:path';

/**
 * The version in the package's own package.json (the one `npm ci` installed), for `--version`.
 * Found by walking up from this module to the package.json named compliance-relay (as shared's
 * `findPackageRoot` does), without importing shared: its door also loads the environment fields and
 * zod, which `--help` does not need.
 */
export function readPackageVersion(start: string = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'compliance-relay') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`compliance-relay package.json not found above ${start}`);
  }
}

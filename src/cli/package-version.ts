import fs from 'node:fs';
import path from 'node:path';

/**
 * The version in the package's own package.json, for `--version` and the boot line: found by walking up from this
 * module (as shared's `findPackageRoot` does) without importing shared, whose door loads zod, which `--help` does not need.
 */
export function readPackageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'compliance-relay') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`compliance-relay package.json not found above ${__dirname}`);
  }
}

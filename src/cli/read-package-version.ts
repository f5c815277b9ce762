import fs from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from '../shared';

/** The version in the package's own package.json (the one `npm ci` installed), for `--version`. */
export function readPackageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(findPackageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

import fs from 'node:fs';
import path from 'node:path';

/** The package's own root (package.json, templates/), found walking up: the same from src/ under jest and from dist/src/. */
export function findPackageRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'compliance-relay') return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`compliance-relay package root not found above ${__dirname}`);
  }
}

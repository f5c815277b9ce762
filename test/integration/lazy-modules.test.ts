import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';

const MAIN = path.join(findPackageRoot(), 'dist', 'src', 'main.js');

/**
 * Runs the built CLI with `args` in a fresh Node process and returns the packages (under node_modules)
 * it had loaded when it exited.
 */
function packagesLoadedBy(args: string[]): { status: number | null; packages: string[] } {
  const script = `
    process.argv = [process.argv[0], 'compliance-relay', ...${JSON.stringify(args)}];
    process.on('exit', () => {
      const names = Object.keys(require.cache).map((k) => /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)[\\\\/]/.exec(k)?.[1]).filter(Boolean);
      process.stderr.write('LOADED ' + JSON.stringify([...new Set(names)]) + '\\n');
    });
    require(${JSON.stringify(MAIN)});
  `;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module list from the CLI: ${run.stderr}`);
  return { status: run.status, packages: JSON.parse(line.slice('LOADED '.length)) as string[] };
}

describe('modules the CLI loads', () => {
  it('`--help` loads neither Handlebars nor juice: the templates are compiled only by commands that render', () => {
    const { status, packages } = packagesLoadedBy(['--help']);
    expect(status).toBe(0);
    expect(packages).not.toContain('handlebars');
    expect(packages).not.toContain('juice');
  });
});

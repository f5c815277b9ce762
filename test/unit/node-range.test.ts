import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const { engines } = JSON.parse(read('package.json')) as { engines: { node: string } };

/**
 * The Node versions package.json declares are ones on which `npm ci` installs every locked package without an
 * EBADENGINE warning, dev dependencies included (`npm test` needs them), and the docs and the image say the same.
 */
describe("package.json's Node range", () => {
  it('is accepted by every package in the lockfile, for every version in it', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } }> };
    expect(lock.packages[''].engines?.node).toBe(engines.node);
    const refusing = Object.entries(lock.packages)
      .filter(([name, pkg]) => name !== '' && pkg.engines?.node && !semver.subset(engines.node, pkg.engines.node))
      .map(([name, pkg]) => `${name}@${pkg.version} wants node ${pkg.engines!.node}`);
    expect(refusing).toEqual([]);
  });

  it('starts where the README and the development page say, and holds the Node of the Docker image', () => {
    const lowest = semver.minVersion(engines.node)!;
    const stated = `Node.js ${lowest.major}.${lowest.minor}`;
    expect(read('README.md')).toContain(stated);
    expect(read('docs/development.md')).toContain(stated);
    const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(0);
    for (const major of images) expect([major, semver.intersects(`${major}.x`, engines.node)]).toEqual([major, true]);
  });
});

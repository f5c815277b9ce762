import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startRelayProcess } from '../helpers/relay-process';
import { makeTempDir } from '../helpers/relay-harness';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/**
 * One version everywhere an operator reads it: `--version`, the boot line of `serve`, the Docker image's OCI
 * label, the lockfile and the newest release in CHANGELOG.md all say package.json's version.
 */
describe('the version', () => {
  const { version } = JSON.parse(read('package.json')) as { version: string };

  it("is the newest release in CHANGELOG.md, the lockfile's and the image label's", () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
    expect([lock.version, lock.packages[''].version]).toEqual([version, version]);
    expect(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'))?.[1]).toBe(version);
    expect(/org\.opencontainers\.image\.version="([^"]+)"/.exec(read('Dockerfile'))?.[1]).toBe(version);
  });

  it('is what `--version` prints and what the boot line of `serve` names', async () => {
    const printed = execFileSync(process.execPath, [path.join(ROOT, 'dist/src/main.js'), '--version'], { encoding: 'utf8' });
    expect(printed.trim()).toBe(version);
    const dataDir = makeTempDir('version-');
    const relay = await startRelayProcess({ LOG_LEVEL: 'info' }, dataDir);
    try {
      const boot = relay
        .output()
        .split('\n')
        .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { msg?: string }).msg : undefined))
        .find((msg) => msg?.startsWith('compliance-relay '));
      expect(boot).toMatch(new RegExp(`^compliance-relay ${version.replace(/\./g, '\\.')} starting: `));
    } finally {
      await relay.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

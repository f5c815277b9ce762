import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';
import { makeTempDir } from '../helpers/relay-harness';

const MAIN = path.join(findPackageRoot(), 'dist', 'src', 'main.js');

/**
 * Starts `serve` (zero configuration but PORT, a port the OS just gave out) inside a Node process that
 * reads its own V8 heap, as main.js runs when a user starts it: once /healthz answers, the young generation's
 * committed size at rest; then, after the process has allocated and kept ~40 MB of short-lived arrays,
 * its size again. Prints both (bytes) and exits.
 */
function measureYoungGeneration(nodeOptions?: string): { atRest: number; underLoad: number } {
  const script = `
    const net = require('node:net');
    const v8 = require('node:v8');
    const youngBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const port = probe.address().port;
      probe.close(() => {
        process.env.PORT = String(port);
        process.argv = [process.argv[0], 'compliance-relay', 'serve'];
        require(${JSON.stringify(MAIN)});
        const poll = setInterval(() => {
          fetch('http://127.0.0.1:' + port + '/healthz').then((res) => {
            if (!res.ok) return;
            clearInterval(poll);
            const atRest = youngBytes();
            // Work as under load: many objects that live a little while (a scavenge sees them survive).
            let kept = [];
            for (let i = 0; i < 4000; i++) {
              kept.push(new Array(1000).fill(i));
              if (kept.length > 300) kept = kept.slice(150);
            }
            process.stderr.write('YOUNG ' + JSON.stringify({ atRest, underLoad: youngBytes() }) + '\\n');
            process.exit(0);
          }, () => undefined);
        }, 50);
      });
    });
  `;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: makeTempDir(),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
    timeout: 60_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('YOUNG '));
  if (!line) throw new Error(`no heap figures from serve: ${run.stderr}`);
  return JSON.parse(line.slice('YOUNG '.length)) as { atRest: number; underLoad: number };
}

const MB = 1024 * 1024;

describe("serve's young generation (issue 16: memory at rest)", () => {
  it('stays at its start size while serve starts, so it sits small at rest, and grows again once serve is listening', () => {
    const { atRest, underLoad } = measureYoungGeneration();
    // V8's initial young generation is two 1 MB semi-spaces; without the hold, start-up grew it to 32 MB.
    expect(atRest).toBeLessThanOrEqual(4 * MB);
    expect(underLoad).toBeGreaterThan(atRest);
  });

  it("leaves V8's young generation alone when the user tunes it in NODE_OPTIONS", () => {
    const { atRest } = measureYoungGeneration('--max-semi-space-size=8');
    // With a maximum of 8 MB a semi-space, start-up grows it beyond what the hold would keep.
    expect(atRest).toBeGreaterThan(4 * MB);
  });
});

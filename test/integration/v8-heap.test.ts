import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';
import { makeTempDir } from '../helpers/relay-harness';

const MAIN = path.join(findPackageRoot(), 'dist', 'src', 'main.js');

/**
 * Starts `serve` (zero configuration but PORT, a port the OS just gave out) inside a Node process that
 * reads its own V8 heap, as main.js runs when a user starts it. Once /healthz answers, `measure` (the
 * source of a function body, with `v8` in scope) runs in that process and returns what it measured.
 */
function measureServeHeap<T>(measure: string, options: { nodeOptions?: string; nodeArgs?: string[] } = {}): T {
  const script = `
    const net = require('node:net');
    const v8 = require('node:v8');
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
            const measured = (() => { ${measure} })();
            process.stderr.write('HEAP ' + JSON.stringify(measured) + '\\n');
            process.exit(0);
          }, () => undefined);
        }, 50);
      });
    });
  `;
  const run = spawnSync(process.execPath, [...(options.nodeArgs ?? []), '-e', script], {
    cwd: makeTempDir(),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...(options.nodeOptions ? { NODE_OPTIONS: options.nodeOptions } : {}) },
    timeout: 60_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('HEAP '));
  if (!line) throw new Error(`no heap figures from serve: ${run.stderr}`);
  return JSON.parse(line.slice('HEAP '.length)) as T;
}

/**
 * A burst's shape: 8 MB kept alive, then objects that live long enough to be promoted to the old
 * generation and die there (a delivery's view, mail and kept copy live across several awaits): 20,000
 * to 40,000 arrays alive at a time, 400,000 made. Returns the old generation's largest committed size
 * meanwhile (bytes).
 */
const PROMOTED_GARBAGE = `
  const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  globalThis.keptAlive = Array.from({ length: 1000 }, (_, i) => new Array(1000).fill(i));
  let window = [];
  let largest = 0;
  for (let i = 0; i < 400000; i++) {
    window.push(new Array(100).fill(i));
    if (window.length > 40000) window = window.slice(20000);
    if (i % 1000 === 0) largest = Math.max(largest, oldSpace().space_size);
  }
  return { largest };
`;

/** The V8 flags the image's CMD gives `node` before main.js (the relay sets none from its code). */
function readDockerfileNodeFlags(): string[] {
  const dockerfile = fs.readFileSync(path.join(findPackageRoot(), 'Dockerfile'), 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  if (!cmd) throw new Error('the Dockerfile has no CMD in exec form');
  const args = JSON.parse(cmd[1]) as string[];
  return args.slice(1, args.indexOf('dist/src/main.js'));
}

describe("the image's old generation (memory under a burst)", () => {
  it("is collected before promoted garbage outgrows what is alive, with the Dockerfile's flags against V8's own 4x", () => {
    const flags = readDockerfileNodeFlags();
    expect(flags).toContain('--heap-growing-percent=100');
    // One run of each swings by a fifth with the machine's load (2x: 130-157 MB, 4x: 205-273 MB): the median of three is compared.
    const medianLargest = (nodeArgs: string[]) =>
      [0, 1, 2].map(() => measureServeHeap<{ largest: number }>(PROMOTED_GARBAGE, { nodeArgs }).largest).sort((a, b) => a - b)[1];
    const image = medianLargest(flags);
    // V8's own choice for this load came to 4x (old generation up to 236 MB).
    const fourTimes = medianLargest(['--heap-growing-percent=300']);
    expect(image).toBeLessThan(0.75 * fourTimes);
  });
});

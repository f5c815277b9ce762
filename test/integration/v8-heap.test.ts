import { spawnSync } from 'node:child_process';
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

/** The young generation's committed size at rest, then after ~40 MB of short-lived arrays (bytes). */
const YOUNG_GENERATION = `
  const youngBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
  const atRest = youngBytes();
  // Work as under load: many objects that live a little while (a scavenge sees them survive).
  let kept = [];
  for (let i = 0; i < 4000; i++) {
    kept.push(new Array(1000).fill(i));
    if (kept.length > 300) kept = kept.slice(150);
  }
  return { atRest, underLoad: youngBytes() };
`;

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

const MB = 1024 * 1024;

describe("serve's young generation (issue 16: memory at rest)", () => {
  it('stays at its start size while serve starts, so it sits small at rest, and grows again once serve is listening', () => {
    const { atRest, underLoad } = measureServeHeap<{ atRest: number; underLoad: number }>(YOUNG_GENERATION);
    // V8's initial young generation is two 1 MB semi-spaces; without the hold, start-up grew it to 32 MB.
    expect(atRest).toBeLessThanOrEqual(4 * MB);
    expect(underLoad).toBeGreaterThan(atRest);
  });

  it("leaves V8's young generation alone when the user tunes it in NODE_OPTIONS", () => {
    const { atRest } = measureServeHeap<{ atRest: number }>(YOUNG_GENERATION, { nodeOptions: '--max-semi-space-size=8' });
    // With a maximum of 8 MB a semi-space, start-up grows it beyond what the hold would keep.
    expect(atRest).toBeGreaterThan(4 * MB);
  });
});

describe("serve's old generation (issue 16: memory under a burst)", () => {
  it('is collected before promoted garbage outgrows what is alive, unless the user sets the growth', () => {
    const relay = measureServeHeap<{ largest: number }>(PROMOTED_GARBAGE);
    // The user's own choice on the node command line wins: here 4×, which V8's own default also came to
    // for this load (old generation up to 236 MB; 252–275 MB at 4×, 144–149 MB at the relay's 2×).
    const userTuned = measureServeHeap<{ largest: number }>(PROMOTED_GARBAGE, { nodeArgs: ['--heap-growing-percent=300'] });
    expect(relay.largest).toBeLessThan(0.75 * userTuned.largest);
  });
});

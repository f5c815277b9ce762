import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBenchmarks, writeBenchmarksMd } from '../../bench/run';
import { evaluateFigure, type Benchmark } from '../../bench/lib/types';

// Smoke only: the benchmarks run with tiny counts and produce figures. No timing is asserted here;
// timing lives in `npm run bench`.
describe('bench runner', () => {
  it('runs the render benchmark with tiny counts and reports finite figures', async () => {
    const run = await runBenchmarks({ only: ['render'], quick: true, log: () => {} });
    expect(run.failures).toEqual([]);
    expect(run.figures.length).toBeGreaterThan(0);
    for (const f of run.figures) expect(Number.isFinite(f.value)).toBe(true);
  });

  it("runs the README's first command line for its timing (the figure itself is read in npm run bench)", async () => {
    const run = await runBenchmarks({ only: ['cli-first-call'], quick: true, log: () => {} });
    expect(run.failures).toEqual([]);
    expect(run.figures.map((f) => f.baseline?.name)).toEqual(['node -e 0 (first call)', 'node -e 0']);
    for (const f of run.figures) expect(Number.isFinite(f.value)).toBe(true);
  });

  it('mails a small network through the built relay and its NetBox double, and measures it next to the plain download', async () => {
    const run = await runBenchmarks({ only: ['big-network'], quick: true, log: () => {} });
    expect(run.failures).toEqual([]);
    const html = run.figures.find((f) => f.name === 'big network: the mail’s HTML');
    expect(html?.value).toBeGreaterThan(1000);
    for (const f of run.figures) expect(Number.isFinite(f.value)).toBe(true);
    expect(run.figures.filter((f) => f.baseline).every((f) => f.baseline!.value > 0)).toBe(true);
  }, 120_000);

  it('judges ratio targets against the same-run baseline and bounds against the value', () => {
    expect(
      evaluateFigure('b', {
        name: 'x',
        value: 80,
        unit: '/s',
        baseline: { name: 'base', value: 100 },
        target: { kind: 'ratio-at-least', ratio: 0.8 },
      }),
    ).toMatchObject({ ratio: 0.8, met: true });
    expect(
      evaluateFigure('b', {
        name: 'x',
        value: 79,
        unit: '/s',
        baseline: { name: 'base', value: 100 },
        target: { kind: 'ratio-at-least', ratio: 0.8 },
      }).met,
    ).toBe(false);
    expect(evaluateFigure('b', { name: 'p99', value: 12, unit: 'ms', target: { kind: 'at-most', value: 10 } }).met).toBe(false);
    expect(evaluateFigure('b', { name: 'p99', value: Number.NaN, unit: 'ms', target: { kind: 'at-most', value: 10 } }).met).toBe(false);
    expect(evaluateFigure('b', { name: 'info', value: 1, unit: 'x' }).met).toBeUndefined();
  });

  it('keeps going after a benchmark fails and names it', async () => {
    const broken: Benchmark = {
      id: 'broken',
      title: 'throws',
      run: async () => {
        throw new Error('peer would not start');
      },
    };
    const fine: Benchmark = { id: 'fine', title: 'works', run: async () => [{ name: 'n', value: 1, unit: 'x' }] };
    const run = await runBenchmarks({ log: () => {} }, [broken, fine]);
    expect(run.failures).toEqual([{ benchmark: 'broken', error: 'peer would not start' }]);
    expect(run.figures.map((f) => f.benchmark)).toEqual(['fine']);
  });

  it('rewrites only the generated block of BENCHMARKS.md', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-md-'));
    try {
      const file = path.join(dir, 'BENCHMARKS.md');
      fs.writeFileSync(
        file,
        '# Benchmarks\n\nprose before\n\n<!-- bench:results:begin (written by npm run bench) -->\nold\n<!-- bench:results:end -->\n\nprose after\n',
      );
      const fine: Benchmark = { id: 'fine', title: 'works', run: async () => [{ name: 'n|pipe', value: 1, unit: 'x', note: 'why' }] };
      writeBenchmarksMd(file, await runBenchmarks({ log: () => {} }, [fine]));
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toContain('prose before');
      expect(text).toContain('prose after');
      expect(text).not.toContain('\nold\n');
      expect(text).toContain('n\\|pipe');
      expect(text).toContain('Node v');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * `npm run bench`: runs every registered benchmark (bench/benchmarks.ts), prints one table with
 * each figure next to its same-run baseline and target, writes bench/results.json and refreshes
 * the generated block of BENCHMARKS.md.
 *
 *   node dist/bench/run.js [--only id,id] [--quick] [--no-write]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPackageRoot } from '../src/shared';
import { BENCHMARKS } from './benchmarks';
import { formatMarkdownTable, formatTextTable, readMachineInfo, type MachineInfo } from './lib/report';
import { evaluateFigure, type Benchmark, type FigureResult } from './lib/types';

export interface RunOptions {
  only?: string[];
  quick?: boolean;
  log?: (message: string) => void;
}

export interface RunResult {
  machine: MachineInfo;
  startedAt: string;
  command: string;
  figures: FigureResult[];
  /** Benchmarks that threw, with the error: the run goes on with the others. */
  failures: { benchmark: string; error: string }[];
}

/** Runs the selected benchmarks one after the other (never in parallel: they would measure each other). */
export async function runBenchmarks(options: RunOptions = {}, benchmarks: Benchmark[] = BENCHMARKS): Promise<RunResult> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const selected = options.only?.length ? benchmarks.filter((b) => options.only!.includes(b.id)) : benchmarks;
  const unknown = (options.only ?? []).filter((id) => !benchmarks.some((b) => b.id === id));
  if (unknown.length) throw new Error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.id).join(', ')}`);
  const machine = readMachineInfo();
  const result: RunResult = { machine, startedAt: new Date().toISOString(), command: commandLine(options), figures: [], failures: [] };
  for (const bench of selected) {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${bench.id}-`));
    const started = Date.now();
    log(`▶ ${bench.id}: ${bench.title}`);
    try {
      const figures = await bench.run({ quick: options.quick ?? false, tmpDir, log: (m) => log(`  ${bench.id}: ${m}`) });
      result.figures.push(...figures.map((f) => evaluateFigure(bench.id, f)));
    } catch (error) {
      log(`  ${bench.id} FAILED: ${(error as Error)?.stack ?? String(error)}`);
      result.failures.push({ benchmark: bench.id, error: String((error as Error)?.message ?? error) });
    } finally {
      fs.rmSync(tmpDir, { recursive: true, force: true });
      log(`  ${bench.id}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }
  machine.loadAtEnd = readMachineInfo().loadAtStart;
  return result;
}

function commandLine(options: RunOptions): string {
  const args = [...(options.only?.length ? [`--only ${options.only.join(',')}`] : []), ...(options.quick ? ['--quick'] : [])];
  return args.length ? `npm run bench -- ${args.join(' ')}` : 'npm run bench';
}

const BEGIN = '<!-- bench:results:begin (written by npm run bench) -->';
const END = '<!-- bench:results:end -->';

/** Replaces the generated block of BENCHMARKS.md with this run (the prose around it stays). */
export function writeBenchmarksMd(file: string, run: RunResult): void {
  const m = run.machine;
  const block = [
    BEGIN,
    `Latest run: ${run.startedAt} — \`${run.command}\``,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.totalMemGb} GiB, ${m.platform}, Node ${m.node}; load average (1 min) ${m.loadAtStart.toFixed(2)} at start, ${(m.loadAtEnd ?? Number.NaN).toFixed(2)} at end.`,
    '',
    formatMarkdownTable(run.figures),
    ...(run.failures.length ? ['', '**Failed:**', ...run.failures.map((f) => `- ${f.benchmark}: ${f.error}`)] : []),
    END,
  ].join('\n');
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start ? current.slice(0, start) + block + current.slice(end + END.length) : `${current.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, next);
}

async function main(argv: string[]): Promise<number> {
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex >= 0 ? (argv[onlyIndex + 1] ?? '').split(',').filter(Boolean) : undefined;
  const quick = argv.includes('--quick');
  const run = await runBenchmarks({ only, quick });
  process.stdout.write(`\n${formatTextTable(run.figures)}\n`);
  for (const f of run.failures) process.stdout.write(`FAILED ${f.benchmark}: ${f.error}\n`);
  process.stdout.write(
    `\n${run.machine.cpus} cores, Node ${run.machine.node}, load ${run.machine.loadAtStart.toFixed(2)} → ${(run.machine.loadAtEnd ?? 0).toFixed(2)}\n`,
  );
  // A partial or quick run must not overwrite the recorded full run.
  if (!argv.includes('--no-write') && !quick && !only) {
    const root = findPackageRoot();
    fs.writeFileSync(path.join(root, 'bench', 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
    writeBenchmarksMd(path.join(root, 'BENCHMARKS.md'), run);
    process.stdout.write('wrote bench/results.json and BENCHMARKS.md\n');
  }
  return run.failures.length ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`bench: ${(error as Error)?.stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}

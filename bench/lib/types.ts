/**
 * A target is always a ratio to a baseline measured in the same run, or a bound: these machines are
 * noisy, so an absolute "requests per second" would say more about the neighbours than about us.
 */
export type Target =
  | { kind: 'ratio-at-least'; ratio: number }
  | { kind: 'ratio-at-most'; ratio: number }
  | { kind: 'at-most'; value: number }
  | { kind: 'at-least'; value: number };

/** One measured figure, with what it is compared against. */
export interface Figure {
  /** Short name shown in the table, e.g. "deliveries/s". */
  name: string;
  value: number;
  unit: string;
  /** A figure measured in the same run that this one is compared with. */
  baseline?: { name: string; value: number };
  target?: Target;
  /** Anything a reader needs to read the figure right (settings, counts, errors seen). */
  note?: string;
}

/** What the runner gives every benchmark. */
export interface BenchContext {
  /** Tiny counts and durations (the jest smoke test, `--quick`): proves it runs, measures nothing. */
  quick: boolean;
  /** A fresh temporary directory for this benchmark, removed afterwards. */
  tmpDir: string;
  /** Progress lines (stderr), so the table on stdout stays clean. */
  log: (message: string) => void;
}

/** A benchmark registered in bench/benchmarks.ts. */
export interface Benchmark {
  /** Short id used by `--only`. */
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<Figure[]>;
}

/** A figure as written to bench/results.json, with its verdict. */
export interface FigureResult extends Figure {
  benchmark: string;
  ratio?: number;
  /** undefined when the figure has no target (informational). */
  met?: boolean;
}

/** Decides whether a figure meets its target. */
export function evaluateFigure(benchmark: string, figure: Figure): FigureResult {
  const ratio = figure.baseline && figure.baseline.value > 0 ? figure.value / figure.baseline.value : undefined;
  let met: boolean | undefined;
  const t = figure.target;
  if (t?.kind === 'ratio-at-least') met = ratio !== undefined && ratio >= t.ratio;
  else if (t?.kind === 'ratio-at-most') met = ratio !== undefined && ratio <= t.ratio;
  else if (t?.kind === 'at-most') met = Number.isFinite(figure.value) && figure.value <= t.value;
  else if (t?.kind === 'at-least') met = Number.isFinite(figure.value) && figure.value >= t.value;
  return { benchmark, ...figure, ...(ratio !== undefined ? { ratio } : {}), ...(met !== undefined ? { met } : {}) };
}

/** "≥ 0.8× baseline", "≤ 10 ms". */
export function describeTarget(target: Target | undefined, unit: string): string {
  if (!target) return '';
  if (target.kind === 'ratio-at-least') return `≥ ${target.ratio}×`;
  if (target.kind === 'ratio-at-most') return `≤ ${target.ratio}×`;
  if (target.kind === 'at-most') return `≤ ${target.value} ${unit}`;
  return `≥ ${target.value} ${unit}`;
}

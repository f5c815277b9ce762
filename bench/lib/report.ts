import os from 'node:os';
import { describeTarget, type FigureResult } from './types';
import { formatNumber } from './stats';

/** Where and how a run happened: figures mean nothing without it. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  /** 1-minute load average at the start and at the end of the run. */
  loadAtStart: number;
  loadAtEnd?: number;
  totalMemGb: number;
}

/** Reads the machine facts the report needs. */
export function readMachineInfo(): MachineInfo {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAtStart: os.loadavg()[0],
    totalMemGb: Math.round(os.totalmem() / 2 ** 30),
  };
}

function verdict(f: FigureResult): string {
  if (f.met === undefined) return '';
  return f.met ? 'yes' : 'NO';
}

/** The results as rows: benchmark, figure, value, baseline, ratio, target, met, note. */
function buildRows(figures: FigureResult[]): string[][] {
  return figures.map((f) => [
    f.benchmark,
    f.name,
    `${formatNumber(f.value)} ${f.unit}`,
    f.baseline ? `${formatNumber(f.baseline.value)} (${f.baseline.name})` : '',
    f.ratio !== undefined ? `${f.ratio.toFixed(2)}×` : '',
    describeTarget(f.target, f.unit),
    verdict(f),
  ]);
}

const HEADER = ['benchmark', 'figure', 'value', 'baseline (same run)', 'ratio', 'target', 'met?'];

/** A plain-text table for the terminal. */
export function formatTextTable(figures: FigureResult[]): string {
  const rows = [HEADER, ...buildRows(figures)];
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The same table in Markdown, with notes as a list under it (for BENCHMARKS.md). */
export function formatMarkdownTable(figures: FigureResult[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const rows = buildRows(figures);
  const table = [
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ];
  const notes = figures.filter((f) => f.note).map((f) => `- **${f.benchmark} — ${f.name}**: ${f.note}`);
  return [...table, '', ...notes].join('\n');
}

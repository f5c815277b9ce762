import { buildWaiverJson, WAIVER_STATUSES, type Waiver, type WaiverBook, type WaiverFilter, type WaiverStatus } from '../waivers';
import { createRelayWaiverBook } from '../relay';
import { createLogger, RelayError, systemClock } from '../shared';
import { formatTable, withStore, type Column } from './delivery-commands';
import { EXIT_USAGE, UsageError, type CliIo, type RunWithConfig } from './io';

export type WaiverListOptions = Pick<WaiverFilter, 'source' | 'test' | 'device'> & { status?: string; json?: boolean };

/** Runs one waiver action, its audit lines on stderr as JSON; a refusal (invalid, unknown, read-only, ended) exits 64. */
function withBook(io: CliIo, withConfig: RunWithConfig, fn: (book: WaiverBook) => Promise<void>): Promise<void> {
  return withStore(io, withConfig, async (store, config) => {
    const logger = createLogger({
      level: 'info',
      format: 'json',
      secrets: config.secretValues,
      destination: { write: (line: string) => void io.stderr.write(line) },
    });
    const book = createRelayWaiverBook(config, { clock: io.clock ?? systemClock, logger }, store);
    try {
      await fn(book);
    } catch (error) {
      if (!(error instanceof RelayError) || error.status >= 500) throw error;
      io.stderr.write(`compliance-relay: ${error.message}\n`);
      // `allDevices` → `--all-devices`: issues name the flag the user typed.
      const flag = (path: string) => path.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      for (const issue of error.issues ?? []) io.stderr.write(`  - --${flag(issue.path)}: ${issue.message}\n`);
      return EXIT_USAGE;
    }
  });
}

export async function listWaivers(opts: WaiverListOptions, io: CliIo, withConfig: RunWithConfig): Promise<void> {
  if (opts.status !== undefined && !(WAIVER_STATUSES as readonly string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${WAIVER_STATUSES.join(', ')}`);
  }
  await withBook(io, withConfig, async (book) => {
    const { json, ...filter } = opts;
    const waivers = await book.list({ ...filter, status: filter.status as WaiverStatus | undefined });
    const now = (io.clock ?? systemClock).now();
    if (json) io.stdout.write(`${JSON.stringify({ waivers: waivers.map((w) => buildWaiverJson(w, now)) }, null, 2)}\n`);
    else io.stdout.write(waivers.length === 0 ? 'No waivers.\n' : `${formatTable(waivers, buildColumns(now)).join('\n')}\n`);
  });
}

export async function addWaiver(opts: object, io: CliIo, withConfig: RunWithConfig): Promise<void> {
  await withBook(io, withConfig, async (book) => {
    const waiver = await book.add(opts);
    io.stdout.write(`Added waiver ${waiver.id}: ${describe(waiver)} until ${waiver.until} (end of that day, UTC).\n`);
  });
}

export async function expireWaiver(id: string, opts: { author: string }, io: CliIo, withConfig: RunWithConfig): Promise<void> {
  await withBook(io, withConfig, async (book) => {
    const waiver = await book.expire(id, opts.author);
    io.stdout.write(`Expired waiver ${waiver.id}: ${describe(waiver)} counts as failing again.\n`);
  });
}

function describe(waiver: Waiver): string {
  return `${waiver.test} on ${waiver.device ?? 'all devices'} (${waiver.source})`;
}

const buildColumns = (now: number): Column<Waiver>[] => [
  ['ID', (w) => w.id, 10],
  ['STATUS', (w) => buildWaiverJson(w, now).status + (w.origin === 'file' ? ' (file)' : ''), 16],
  ['SOURCE', (w) => w.source, 12],
  ['TEST', (w) => w.test, 24],
  ['DEVICE', (w) => w.device ?? '(all devices)', 20],
  ['UNTIL', (w) => w.until, 10],
  ['AUTHOR', (w) => w.author, 14],
  ['REASON', (w) => w.reason || '-', 40],
];

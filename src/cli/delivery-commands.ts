import type { Config } from '../config';
import { buildDeliveriesJson, type DeliveryJson } from '../http';
import { createSecretMask, neutralizeText, parseDurationMs, systemClock } from '../shared';
import {
  DELIVERY_STATES,
  DIGEST_KEY_PREFIX,
  openStore,
  parseStoredId,
  StorageUnavailableError,
  type DeliveryState,
  type Store,
} from '../store';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { EXIT_UNAVAILABLE, UsageError, type CliIo, type RunWithConfig } from './io';

export type ListOptions = { state?: string; source?: string; limit: string; json?: boolean };

type StoreCommand = (store: Store, config: Config) => Promise<number | void>;

export type PruneOptions = { dead?: boolean; sent?: boolean; olderThan: string };

export async function listDeliveries(opts: ListOptions, io: CliIo, withConfig: RunWithConfig): Promise<void> {
  if (opts.state !== undefined && !(DELIVERY_STATES as readonly string[]).includes(opts.state)) {
    throw new UsageError(`--state must be one of ${DELIVERY_STATES.join(', ')}`);
  }
  const limit = Number(opts.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100_000) throw new UsageError('--limit must be a whole number from 1 to 100000');
  await withStore(io, withConfig, async (store, config) => {
    if (opts.source !== undefined && !config.sources.some((s) => s.name === opts.source)) {
      throw new UsageError(`--source must be one of ${config.sources.map((s) => s.name).join(', ')}`);
    }
    const listed = await store.listDeliveries({ state: opts.state as DeliveryState | undefined, limit, netboxSource: opts.source });
    const rows = await buildDeliveriesJson(store, listed, createSecretMask(config.secretValues));
    const { counts } = await store.readQueue();
    if (opts.json) io.stdout.write(`${JSON.stringify({ deliveries: rows, counts }, null, 2)}\n`);
    else io.stdout.write(`${formatDeliveryTable(rows)}\n${DELIVERY_STATES.map((s) => `${s}: ${counts[s]}`).join('  ')}\n`);
  });
}

export async function retryDeliveries(
  id: string | undefined,
  opts: { allDead?: boolean },
  io: CliIo,
  withConfig: RunWithConfig,
): Promise<void> {
  if ((id === undefined) === !opts.allDead) throw new UsageError('give a delivery id or --all-dead (one of them)');
  await withStore(io, withConfig, async (store) => {
    const now = systemClock.now();
    if (opts.allDead) {
      const n = await store.requeue(now);
      io.stdout.write(
        `Requeued ${n} dead ${n === 1 ? 'delivery' : 'deliveries'}; a running relay sends ${n === 1 ? 'it' : 'them'} within a second.\n`,
      );
      return;
    }
    const deliveryId = parseStoredId(id!);
    const record = deliveryId === undefined ? undefined : await store.getDelivery(deliveryId);
    if (!record) throw new UsageError(`no delivery ${id}`);
    if (!(await store.requeue(now, record.id))) {
      throw new UsageError(`delivery ${record.id} is ${record.state}; only dead or sent deliveries can be requeued`);
    }
    io.stdout.write(`Requeued delivery ${record.id} (report ${record.reportId}).\n`);
  });
}

export async function pruneDeliveries(opts: PruneOptions, io: CliIo, withConfig: RunWithConfig): Promise<void> {
  const ageMs = parseDurationMs(opts.olderThan);
  if (ageMs === undefined || (!opts.dead && !opts.sent)) {
    throw new UsageError('use --dead and/or --sent with --older-than <duration> (e.g. 30d)');
  }
  await withStore(io, withConfig, async (store) => {
    const before = systemClock.now() - ageMs;
    for (const state of ['sent', 'dead'] as const) {
      if (state === 'sent' ? !opts.sent : !opts.dead) continue;
      const n = await store.pruneDeliveries({ state, before });
      io.stdout.write(
        `Pruned ${n} ${state} ${n === 1 ? 'delivery' : 'deliveries'} last changed before ${new Date(before).toISOString()}.\n`,
      );
    }
  });
}

/** Runs `fn` with the configuration and the store `serve` uses; an unusable store is exit 69, a bad configuration 78. */
export function withStore(io: CliIo, withConfig: RunWithConfig, fn: StoreCommand): Promise<void> {
  return withConfig(async (config) => {
    let store: Store | undefined;
    try {
      store = openStore(config.store);
      return (await fn(store, config)) ?? 0;
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      io.stderr.write(`compliance-relay: the outbox is not usable (${error.code}): ${error.message}\n`);
      return EXIT_UNAVAILABLE;
    } finally {
      await store?.close();
    }
  });
}

/** A report's id (and `catch-up` when fetched late); a digest names its route, a watchdog or catch-up notice says so. */
function describeWhatIsMailed(d: DeliveryJson): string {
  // A digest's key names its route and period: `digest:<route>@<period start>`.
  if (d.kind === 'digest') return `digest ${d.dedupKey.slice(DIGEST_KEY_PREFIX.length).split('@')[0]}`;
  if (d.kind === 'watchdog') return d.source === 'catch-up' ? 'catch-up notice' : 'watchdog';
  // Fetched from NetBox because its webhook never arrived.
  return d.receivedVia === 'catch-up' ? `${d.reportId} catch-up` : String(d.reportId);
}

/** The width a `deliveries` table never exceeds (a classic terminal; `--json` has everything). */
const TABLE_WIDTH = 100;
/** Lines an error may wrap onto before it is cut with "…". */
const ERROR_LINES = 3;

/** A table's column: its header, its text, and the most it may take (longer text is cut with "…"). */
export type Column<T> = [header: string, text: (item: T) => string, max: number];

const COLUMNS: Column<DeliveryJson>[] = [
  ['ID', (d) => String(d.id), 16],
  ['REPORT', describeWhatIsMailed, 16],
  // A named NetBox source shows as `<source>@<address>`; the default source as its address alone.
  ['NETBOX', (d) => (d.netboxSource === DEFAULT_SOURCE_NAME ? d.source : `${d.netboxSource}@${d.source}`), 15],
  ['STATE', (d) => d.state, 8],
  ['ATTEMPTS', (d) => String(d.attempts), 8],
  // To the second: the milliseconds say nothing to an operator.
  ['NEXT ATTEMPT', (d) => (d.nextAttemptAt ? d.nextAttemptAt.replace(/\.\d+Z$/, 'Z') : '-'), 20],
  ['ROUTES', describeRoutes, 30],
  ['LAST ERROR', (d) => (d.lastError ? `${d.lastErrorCode ?? ''} ${d.lastError}`.trim() : '-'), Infinity],
];

/** Each route: its state when mailed, else why not; a route by owner names its recipients. */
function describeRoutes(d: DeliveryJson): string {
  if (d.routes.length === 0) return '-';
  const outcome = (r: DeliveryJson['routes'][number]) => (r.outcome === 'send' ? r.state : `${r.outcome} (${r.reason})`);
  return d.routes.map((r) => `${r.route}${r.owners ? ` → ${r.owners.to.join(' ')}` : ''}: ${outcome(r)}`).join(', ');
}

function toCell(text: string): string {
  return neutralizeText(text).replace(/[\r\n\t]+/g, ' ');
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text;
}

function wrapText(text: string, width: number, maxLines: number): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest.length > width && lines.length < maxLines) {
    const space = rest.lastIndexOf(' ', width);
    const end = space > width / 2 ? space : width;
    lines.push(rest.slice(0, end).trimEnd());
    rest = rest.slice(end).trimStart();
  }
  if (rest.length > 0 && lines.length < maxLines) lines.push(rest);
  else if (rest.length > 0) lines[lines.length - 1] = cut(`${lines[lines.length - 1]} ${rest}`, width);
  return lines;
}

/** One line per item under a header line, columns aligned, cells cut with "…" (to `fit`'s widths), control characters made visible. */
export function formatTable<T>(items: readonly T[], columns: readonly Column<T>[], fit = (widths: number[]) => widths): string[] {
  const texts = items.map((item) => columns.map(([, get, max]) => cut(toCell(get(item)), max)));
  const widths = fit(columns.map(([header], i) => Math.max(header.length, ...texts.map((row) => row[i].length))));
  const lines = [columns.map(([h]) => h), ...texts.map((row) => row.map((c, i) => cut(c, widths[i])))];
  return lines.map((cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** The deliveries within TABLE_WIDTH: ROUTES gives way to LAST ERROR, whose cut texts are repeated, wrapped, under the table. */
function formatDeliveryTable(rows: DeliveryJson[]): string {
  if (rows.length === 0) return 'No deliveries.\n';
  const routes = COLUMNS.length - 2;
  let errorWidth = 0;
  const lines = formatTable(rows, COLUMNS, (natural) => {
    const room = TABLE_WIDTH - 'LAST ERROR'.length - natural.slice(0, routes).reduce((n, w) => n + w + 2, 0) - 2;
    const widths = natural.slice(0, -1).map((w, i) => (i === routes ? Math.max(COLUMNS[routes][0].length, Math.min(w, room)) : w));
    errorWidth = Math.max(1, TABLE_WIDTH - widths.reduce((n, w) => n + w + 2, 0));
    return [...widths, errorWidth];
  });
  const cutErrors = rows.flatMap((r) => {
    const error = toCell(COLUMNS[routes + 1][1](r));
    return error.length > errorWidth ? wrapText(`#${r.id} ${error}`, TABLE_WIDTH - 2, ERROR_LINES).map((line) => `  ${line}`) : [];
  });
  if (cutErrors.length) lines.push('', 'Last errors (cut above):', ...cutErrors);
  return lines.join('\n') + '\n';
}
